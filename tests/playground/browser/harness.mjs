// What a browser scenario needs around its steps: Debian's Chromium launched headless, pages that
// record their script errors and failed responses, screenshots, and exactly one JSON result on stdout
// whatever happens (the Python test reads the last line). Used by records_list.mjs.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const TIMEOUT_MS = 60_000;

export async function shot(page, artifacts, name, result, fullPage = false) {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, name);
  await page.screenshot({ path, fullPage });
  result.screenshots.push(path);
}

// Run `scenario(browser, result, newPage)`; newPage(context) opens a page whose errors and 4xx/5xx
// responses land in result.pageErrors and result.failedResponses. A failure is reported in
// result.error with a screenshot of the last page opened.
export async function runScenario({ chromiumPath, artifacts, failureShot }, scenario) {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
  const result = { ok: false, screenshots: [], pageErrors: [], failedResponses: [] };
  let last;
  const newPage = async (context) => {
    last = await context.newPage();
    last.setDefaultTimeout(TIMEOUT_MS);
    last.on("pageerror", (error) => result.pageErrors.push(String(error)));
    last.on("response", (response) => {
      if (response.status() >= 400) result.failedResponses.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    return last;
  };
  try {
    await scenario(browser, result, newPage);
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
    try {
      if (last) await shot(last, artifacts, failureShot, result);
    } catch {
      // the screenshot of a failure is a courtesy
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}
