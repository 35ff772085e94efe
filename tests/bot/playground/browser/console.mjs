// Drives the moderators' console (the admin) in Debian's Chromium (headless) and prints one JSON
// result on stdout. tests/bot/playground/test_console_browser.py starts the server and asserts on it.
//
// Scenario (issue 16): the superuser opens the demo server's page and adds alice as a moderator in
// one step (username and server), gets a set-password link; alice opens it, chooses a password and
// signs in; she saves a personal memory for Mina with the tags "music, jazz" typed with a comma, and
// opens Mina's user page, which must fit a 1400 px wide window. Screenshots go to ARTIFACTS.
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const config = {
  baseUrl: process.env.BASE_URL || "http://127.0.0.1:8000",
  username: process.env.PG_USERNAME || "admin",
  password: process.env.PG_PASSWORD || "",
  server: process.env.PG_SERVER || "Night Owls Demo",
  moderator: process.env.PG_MODERATOR || "alice",
  moderatorPassword: process.env.PG_MODERATOR_PASSWORD || "owls-at-midnight-42",
  member: process.env.PG_MEMBER || "mina",
  artifacts: process.env.PG_ARTIFACTS || "artifacts",
  chromium: process.env.CHROMIUM || "/usr/bin/chromium",
};
const TIMEOUT_MS = 60_000;
const WIDTH = 1400;

async function shot(page, name, result, fullPage = true) {
  mkdirSync(config.artifacts, { recursive: true });
  const path = join(config.artifacts, name);
  await page.screenshot({ path, fullPage });
  result.screenshots.push(path);
}

async function signIn(page, username, password) {
  await page.goto(`${config.baseUrl}/admin/login/?next=/admin/`);
  await page.fill("#id_username", username);
  await page.fill("#id_password", password);
  await Promise.all([page.waitForURL(`${config.baseUrl}/admin/`), page.click("input[type=submit]")]);
}

async function messages(page) {
  return (await page.locator("ul.messagelist li").allTextContents()).map((s) => s.replace(/\s+/g, " ").trim());
}

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "console-chromium-"));
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
    // 1. The superuser adds alice from the server's page.
    const root = await browser.newContext({ viewport: { width: WIDTH, height: 1000 } });
    page = await root.newPage();
    watch(page);
    await signIn(page, config.username, config.password);
    await page.goto(`${config.baseUrl}/admin/personas/server/`);
    await Promise.all([page.waitForURL("**/change/"), page.getByRole("link", { name: config.server }).click()]);
    result.serverPageModerators = (await page.locator(".field-moderator_list .readonly").textContent()).trim();
    result.serverPageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    await shot(page, "console-server-page.png", result);
    await Promise.all([page.waitForURL("**/servermoderator/add/**"), page.getByRole("link", { name: "add a moderator" }).click()]);
    result.preselectedServer = (await page.locator("#id_server option:checked").textContent()).trim();
    result.usernameHelp = (await page.locator("#id_username_helptext").textContent()).trim();
    await page.fill("#id_username", config.moderator);
    await shot(page, "console-add-moderator-form.png", result);
    await Promise.all([page.waitForURL("**/servermoderator/"), page.click("input[name=_save]")]);
    result.addMessages = await messages(page);
    const link = (await page.locator("ul.messagelist code").first().textContent()).trim();
    result.linkPath = new URL(link).pathname;
    await shot(page, "console-moderator-added.png", result);
    result.steps.push("moderator added");
    await root.close();

    // 2. alice chooses her password through the link and signs in.
    const mod = await browser.newContext({ viewport: { width: WIDTH, height: 1000 } });
    page = await mod.newPage();
    watch(page);
    await page.goto(`${config.baseUrl}${result.linkPath}`);
    await page.fill("#id_new_password1", config.moderatorPassword);
    await page.fill("#id_new_password2", config.moderatorPassword);
    await Promise.all([page.waitForURL("**/set-password/done/"), page.click("input[type=submit]")]);
    result.passwordSet = (await page.locator("#content").textContent()).replace(/\s+/g, " ").trim();
    await signIn(page, config.moderator, config.moderatorPassword);
    result.moderatorSections = (await page.locator("#content-main .module caption").allTextContents()).map((s) => s.trim());
    result.moderatorModels = (await page.locator("#content-main .task-group th").allTextContents()).map((s) => s.trim());
    await shot(page, "console-moderator-home.png", result);
    result.steps.push("moderator signed in");

    // 3. alice saves a memory for Mina with comma-separated tags, from Mina's page.
    await page.goto(`${config.baseUrl}/admin/personas/discorduser/?q=${config.member}`);
    await Promise.all([page.waitForURL("**/change/**"), page.locator("#result_list tbody th a").first().click()]);
    const userUrl = page.url();
    await Promise.all([page.waitForURL("**/personalmemory/add/**"), page.getByRole("link", { name: "add a memory" }).click()]);
    const lineage = await page.$eval("#id_persona_lineage_id", (select) => [...select.options].find((o) => o.value)?.value);
    await page.selectOption("#id_persona_lineage_id", lineage);
    await page.fill("#id_content", "{user} plays jazz piano on Sundays");
    await page.fill("#id_tags", "music, jazz");
    result.tagsHelp = (await page.locator("#id_tags_helptext").textContent()).trim();
    await shot(page, "console-memory-form.png", result);
    await Promise.all([page.waitForURL("**/personalmemory/"), page.click("input[name=_save]")]);
    result.memoryMessages = await messages(page);
    result.memoryErrors = await page.locator(".errorlist").allTextContents();
    const row = page.locator("#result_list tbody tr", { hasText: "plays jazz piano" }).first();
    result.savedTags = (await row.locator("td.field-tag_list").textContent()).trim();
    await shot(page, "console-memory-saved.png", result);
    result.steps.push("memory saved");

    // 4. Mina's page fits the window.
    await page.goto(userUrl);
    result.userPageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    result.oneLineInputs = await page.$$eval("#id_user_nickname, #id_prefix_override, #id_pronouns", (els) =>
      els.map((el) => `${el.tagName.toLowerCase()}:${el.type}`),
    );
    result.inlineMemoryTags = await page.$$eval("input[name$='-tags']", (els) => els.map((el) => el.value));
    await shot(page, "console-user-page.png", result);
    result.steps.push("user page measured");
    await mod.close();
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
    try {
      if (page) await shot(page, "console-failure.png", result);
    } catch {
      // the screenshot of a failure is a courtesy
    }
  } finally {
    result.pageErrors = pageErrors;
    result.failedResponses = failedResponses;
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

main();
