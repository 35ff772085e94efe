// Opens every kind of page under the Content-Security-Policy in Debian's Chromium (headless) and prints
// one JSON result on stdout; tests/bot/playground/test_csp_browser.py starts the server and asserts on it.
//
// Scenario (issue 26 item 1): the superuser signs in and opens the admin index, a change list with
// filters, a change form, the playground of the demo server (its script must run: the page goes live
// over the websocket; the channel picker opens the other channel) and the API docs (Swagger UI must render the operations). Every message Chromium
// logs about the policy is collected: a blocked inline script or style, image, socket or fetch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const config = {
  baseUrl: process.env.BASE_URL || "http://127.0.0.1:8000",
  username: process.env.PG_USERNAME || "admin",
  password: process.env.PG_PASSWORD || "",
  chromium: process.env.CHROMIUM || "/usr/bin/chromium",
};
const TIMEOUT_MS = 60_000;

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "csp-chromium-"));
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
  const result = { ok: false, visited: [], violations: [], pageErrors: [] };
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    page.on("pageerror", (error) => result.pageErrors.push(String(error)));
    page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) result.violations.push(`${page.url()}: ${message.text().slice(0, 120)} @ ${JSON.stringify(message.location())}`);
    });
    await page.goto(`${config.baseUrl}/admin/login/?next=/admin/`);
    await page.fill("#id_username", config.username);
    await page.fill("#id_password", config.password);
    await Promise.all([page.waitForURL(`${config.baseUrl}/admin/`), page.click("input[type=submit]")]);
    result.policy = (await page.request.get(`${config.baseUrl}/admin/`)).headers()["content-security-policy"];
    for (const path of ["/admin/", "/admin/personas/persona/?is_alter__exact=0", "/admin/personas/persona/1/change/"]) {
      await page.goto(`${config.baseUrl}${path}`);
      await page.waitForLoadState("networkidle");
      result.visited.push(path);
    }
    await page.goto(`${config.baseUrl}/playground/`);
    await page.waitForFunction(() => document.getElementById("playground")?.classList.contains("live"));
    result.playgroundLive = true;
    const other = await page.locator("#pg-channel option:not(:checked)").first().getAttribute("value");
    await Promise.all([page.waitForURL(`**channel=${other}**`), page.selectOption("#pg-channel", other)]);
    result.pickedChannel = (await page.locator("#pg-channel option:checked").textContent()).trim();
    result.visited.push("/playground/");
    await page.goto(`${config.baseUrl}/api/docs`);
    await page.waitForSelector(".swagger-ui .opblock");
    result.swaggerOperations = await page.locator(".swagger-ui .opblock").count();
    result.visited.push("/api/docs");
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(JSON.stringify(result));
}

main();
