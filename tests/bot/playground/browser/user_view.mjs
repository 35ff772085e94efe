// The user view of the moderators' console in Debian's Chromium (headless); prints one JSON result on
// stdout for tests/bot/playground/test_user_view_browser.py.
//
// Scenario (issue 16): alice, a moderator of the demo server only, opens Mina's page and its "what the
// personas know" view (global memories included, nothing of the other server), downloads the export
// and fetches the API's export for the same server; she deletes one of Mina's memories and restores
// it from "Deleted personal memories"; she finds Mina's records with ?q=mina and opens the priced one.
// The superuser opens the server list. Screenshots go to ARTIFACTS.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const config = {
  baseUrl: process.env.BASE_URL || "http://127.0.0.1:8000",
  username: process.env.PG_USERNAME || "admin",
  password: process.env.PG_PASSWORD || "",
  moderator: process.env.PG_MODERATOR || "alice",
  moderatorPassword: process.env.PG_MODERATOR_PASSWORD || "",
  member: process.env.PG_MEMBER || "mina",
  memberId: process.env.PG_MEMBER_ID || "",
  serverDiscId: process.env.PG_SERVER_DISC_ID || "",
  forgetText: process.env.PG_FORGET_TEXT || "",
  artifacts: process.env.PG_ARTIFACTS || "artifacts",
  chromium: process.env.CHROMIUM || "/usr/bin/chromium",
};
const TIMEOUT_MS = 60_000;
const WIDTH = 1400;

async function shot(page, name, result) {
  mkdirSync(config.artifacts, { recursive: true });
  const path = join(config.artifacts, name);
  await page.screenshot({ path, fullPage: true });
  result.screenshots.push(path);
}

async function signIn(page, username, password) {
  await page.goto(`${config.baseUrl}/admin/login/?next=/admin/`);
  await page.fill("#id_username", username);
  await page.fill("#id_password", password);
  await Promise.all([page.waitForURL(`${config.baseUrl}/admin/`), page.click("input[type=submit]")]);
}

const text = async (locator) => ((await locator.textContent()) || "").replace(/\s+/g, " ").trim();
const texts = async (locator) => (await locator.allTextContents()).map((s) => s.replace(/\s+/g, " ").trim());

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
  const result = { ok: false, steps: [], screenshots: [] };
  const pageErrors = [];
  const failedResponses = [];
  const watch = (page) => {
    page.setDefaultTimeout(TIMEOUT_MS);
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("response", (response) => {
      if (response.status() >= 400 && !response.url().endsWith("/favicon.ico")) {
        failedResponses.push(`${response.status()} ${new URL(response.url()).pathname}`);
      }
    });
  };
  let page;
  try {
    // 1. alice opens Mina's user view from Mina's page.
    const mod = await browser.newContext({ viewport: { width: WIDTH, height: 1000 }, acceptDownloads: true });
    page = await mod.newPage();
    watch(page);
    await signIn(page, config.moderator, config.moderatorPassword);
    await page.goto(`${config.baseUrl}/admin/personas/discorduser/?q=${config.member}`);
    await Promise.all([page.waitForURL("**/change/**"), page.locator("#result_list tbody th a").first().click()]);
    await Promise.all([page.waitForURL("**/known/"), page.locator("#what-they-know").click()]);
    const view = page.locator("#user-known");
    result.viewText = await text(view);
    result.lineages = await texts(page.locator("h3.memory-lineage"));
    result.privacyHides = await text(page.locator("#privacy-hides"));
    result.viewWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    await shot(page, "console-user-view.png", result);
    result.steps.push("user view");

    // 2. The download and the API's export for the same server.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-link")]);
    result.downloadName = download.suggestedFilename();
    result.downloaded = JSON.parse(readFileSync(await download.path(), "utf-8"));
    const api = await page.request.get(
      `${config.baseUrl}/api/v1/servers/${config.serverDiscId}/users/${config.memberId}/export`,
    );
    result.apiStatus = api.status();
    result.api = await api.json();
    result.steps.push("export");

    // 3. A memory deleted from its page comes back from the deleted memories list.
    await Promise.all([
      page.waitForURL("**/personalmemory/**/change/**"),
      page.locator("ul.memories a", { hasText: config.forgetText }).click(),
    ]);
    // Reached from the user view, the memory's page keeps ?next= on its Delete link: back to the view.
    await Promise.all([page.waitForURL("**/delete/?next=**"), page.locator("a.deletelink").click()]);
    await Promise.all([page.waitForURL("**/known/"), page.click("input[type=submit]")]);
    result.deleteMessages = await texts(page.locator("ul.messagelist li"));
    await page.goto(`${config.baseUrl}/admin/personas/deletedpersonalmemory/`);
    const row = page.locator("#result_list tbody tr", { hasText: config.forgetText }).first();
    await row.locator("input.action-select").check();
    await page.selectOption("select[name=action]", "restore_memories");
    // The action answers on the same URL: wait for its message, not for a URL already reached.
    await page.click("button[name=index]");
    await page.locator("ul.messagelist li", { hasText: "Restored" }).waitFor();
    result.restoreMessages = await texts(page.locator("ul.messagelist li"));
    await shot(page, "console-memory-restored.png", result);
    await page.goto(`${config.baseUrl}/admin/personas/discorduser/?q=${config.member}`);
    await Promise.all([page.waitForURL("**/change/**"), page.locator("#result_list tbody th a").first().click()]);
    await Promise.all([page.waitForURL("**/known/"), page.locator("#what-they-know").click()]);
    result.memoriesAfterRestore = await texts(page.locator("ul.memories li"));
    result.steps.push("restored");

    // 4. Records by participant, and the priced record.
    await page.goto(`${config.baseUrl}/admin/chatcontext/promptrecord/?q=${config.member}`);
    result.searchRows = await texts(page.locator("#result_list tbody tr"));
    await Promise.all([page.waitForURL("**/change/**"), page.locator("#result_list tbody th a").first().click()]);
    result.recordTokens = await text(page.locator(".record-tokens").first());
    await shot(page, "console-record-cost.png", result);
    result.steps.push("record");
    await mod.close();

    // 5. The superuser's server list with turns, tokens and cost.
    const root = await browser.newContext({ viewport: { width: WIDTH, height: 1000 } });
    page = await root.newPage();
    watch(page);
    await signIn(page, config.username, config.password);
    await page.goto(`${config.baseUrl}/admin/personas/server/`);
    result.serverRows = await texts(page.locator("#result_list tbody tr"));
    await shot(page, "console-server-list.png", result);
    result.steps.push("server list");
    await root.close();
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
    try {
      if (page) await shot(page, "console-user-view-failure.png", result);
    } catch {
      // the screenshot of a failure is a courtesy
    }
  } finally {
    result.pageErrors = pageErrors;
    result.failedResponses = failedResponses;
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

main();
