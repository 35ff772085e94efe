// What every walk through the moderators' console shares: Debian's Chromium (headless), pages that
// collect their script errors and failed responses, full-page screenshots into the artifacts folder,
// the admin's sign-in, and the text of elements with their white space folded.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const TIMEOUT_MS = 60_000;
export const WIDTH = 1400;

export const text = async (locator) => ((await locator.textContent()) || "").replace(/\s+/g, " ").trim();
export const texts = async (locator) => (await locator.allTextContents()).map((s) => s.replace(/\s+/g, " ").trim());

export function launch(chromiumPath) {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
}

// result.screenshots lists the pictures taken; result.pageErrors and result.failedResponses what went
// wrong on any watched page (the favicon aside).
export function session(baseUrl, artifacts, result) {
  result.screenshots = [];
  result.pageErrors = [];
  result.failedResponses = [];
  return {
    watch(page) {
      page.setDefaultTimeout(TIMEOUT_MS);
      page.on("pageerror", (error) => result.pageErrors.push(String(error)));
      page.on("response", (response) => {
        if (response.status() >= 400 && !response.url().endsWith("/favicon.ico")) {
          result.failedResponses.push(`${response.status()} ${new URL(response.url()).pathname}`);
        }
      });
    },
    async shot(page, name) {
      mkdirSync(artifacts, { recursive: true });
      const path = join(artifacts, name);
      await page.screenshot({ path, fullPage: true });
      result.screenshots.push(path);
    },
    async signIn(page, username, password) {
      await page.goto(`${baseUrl}/admin/login/?next=/admin/`);
      await page.fill("#id_username", username);
      await page.fill("#id_password", password);
      await Promise.all([page.waitForURL(`${baseUrl}/admin/`), page.click("input[type=submit]")]);
    },
  };
}
