// What every walk through the moderators' console shares: Debian's Chromium (headless), pages that
// collect their script errors and failed responses, full-page screenshots into the artifacts folder,
// the admin's sign-in, one JSON result however a walk ends, and the text of elements with their white space folded.
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
    async shot(page, name, { fullPage = true } = {}) {
      mkdirSync(artifacts, { recursive: true });
      const path = join(artifacts, name);
      await page.screenshot({ path, fullPage });
      result.screenshots.push(path);
    },
    async signIn(page, username, password, next = "/admin/") {
      await page.goto(`${baseUrl}/admin/login/?next=${next}`);
      await page.fill("#id_username", username);
      await page.fill("#id_password", password);
      await Promise.all([page.waitForURL(`${baseUrl}${next}`), page.click("input[type=submit]")]);
    },
  };
}

// Run `scenario(browser, result, walk)`, walk being the session plus newPage(context), a watched page,
// and print exactly one JSON result on stdout whatever happens (the Python test reads the last line);
// a failure is result.error, with a screenshot of the last page opened.
export async function runWalk({ chromiumPath, baseUrl, artifacts, failureShot }, scenario) {
  const result = { ok: false };
  const browser = await launch(chromiumPath);
  const walk = session(baseUrl, artifacts, result);
  let last;
  walk.newPage = async (context) => {
    last = await context.newPage();
    walk.watch(last);
    return last;
  };
  try {
    await scenario(browser, result, walk);
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
    try {
      if (last) await walk.shot(last, failureShot);
    } catch {
      // the screenshot of a failure is a courtesy
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}
