// Issue 32 items 1, 2 and 5 in Debian's Chromium (headless); prints one JSON result on stdout for
// tests/bot/playground/test_console_user_actions_browser.py.
//
// alice, a moderator of the demo server only, opens Jun's "what the personas know" (Jun is Partial):
// the privacy dropdown shows Partial, and pressing Change as it stands keeps Partial and brings her
// back to Jun's page with a message naming Jun. She edits one of Mina's memories from Mina's page and
// lands back there. She blacklists Mina from that page (only her server is offered; the form says it
// is an opt-out, not a ban), opens forget-me's confirmation for Mina and cancels back to her page,
// then blacklists Sora from the users list with its action. Screenshots go to ARTIFACTS.
import { launch, session, text, texts, WIDTH } from "./console_session.mjs";

const config = {
  baseUrl: process.env.BASE_URL || "http://127.0.0.1:8000",
  moderator: process.env.PG_MODERATOR || "alice",
  moderatorPassword: process.env.PG_MODERATOR_PASSWORD || "",
  partialUser: process.env.PG_PARTIAL_USER || "jun",
  member: process.env.PG_MEMBER || "mina",
  listUser: process.env.PG_LIST_USER || "sora",
  memoryText: process.env.PG_MEMORY_TEXT || "",
  editedText: process.env.PG_EDITED_TEXT || "",
  artifacts: process.env.PG_ARTIFACTS || "artifacts",
  chromium: process.env.CHROMIUM || "/usr/bin/chromium",
};

const path = (page) => new URL(page.url()).pathname + new URL(page.url()).search;
const messages = (page) => texts(page.locator("ul.messagelist li"));

async function openKnown(page, username) {
  await page.goto(`${config.baseUrl}/admin/personas/discorduser/?q=${username}`);
  await Promise.all([page.waitForURL("**/change/**"), page.locator("#result_list tbody th a").first().click()]);
  const changePage = path(page);
  await Promise.all([page.waitForURL("**/known/"), page.locator("#what-they-know").click()]);
  return changePage;
}

async function main() {
  const result = { ok: false, steps: [] };
  const browser = await launch(config.chromium);
  const { watch, shot, signIn } = session(config.baseUrl, config.artifacts, result);
  let page;
  try {
    const context = await browser.newContext({ viewport: { width: WIDTH, height: 1000 } });
    page = await context.newPage();
    watch(page);
    await signIn(page, config.moderator, config.moderatorPassword);

    // 1. The privacy dropdown shows the stored level; Change as it stands keeps it.
    await openKnown(page, config.partialUser);
    const junKnown = path(page);
    result.privacyShown = await text(page.locator("#privacy-action option:checked"));
    await shot(page, "console-privacy-preselected.png");
    await Promise.all([page.waitForURL(`**${junKnown}`), page.click("#privacy-form input[type=submit]")]);
    result.privacyLanded = path(page) === junKnown;
    result.privacyMessages = await messages(page);
    result.privacyHeading = await text(page.locator("#user-known h2").first());
    result.steps.push("privacy kept");

    // 2. A memory edited from Mina's page returns there.
    const minaChange = await openKnown(page, config.member);
    const minaKnown = path(page);
    await Promise.all([
      page.waitForURL("**/personalmemory/**/change/**"),
      page.locator("ul.memories a", { hasText: config.memoryText }).click(),
    ]);
    await page.fill("#id_content", config.editedText);
    await Promise.all([page.waitForURL(`**${minaKnown}`), page.click("input[name=_save]")]);
    result.memoryLanded = path(page) === minaKnown;
    result.memoryMessages = await messages(page);
    result.memoriesAfterEdit = await texts(page.locator("ul.memories li"));
    await shot(page, "console-memory-edited.png");
    result.steps.push("memory edited");

    // 3. Blacklisting Mina from her page: the form, then back to her page.
    await Promise.all([page.waitForURL("**/blacklist/**"), page.locator("#blacklist-link").click()]);
    result.blacklistServers = await texts(page.locator("#add_server option"));
    result.blacklistPreselected = await text(page.locator("#add_server option:checked"));
    result.blacklistHelp = await text(page.locator("#blacklist-add"));
    await shot(page, "console-blacklist-form.png");
    await page.fill("#add_reason", "asked not to be personalized");
    await Promise.all([page.waitForURL(`**${minaKnown}`), page.click("#blacklist-add input[type=submit]")]);
    result.blacklistMessages = await messages(page);
    result.blacklistShown = await text(page.locator("#user-blacklist"));
    await shot(page, "console-blacklisted.png");
    await page.goto(`${config.baseUrl}${minaChange}`);
    result.changePageLink = await text(page.locator("#blacklist-link"));
    result.steps.push("blacklisted from the user's page");

    // 4. Forget-me's confirmation, reached from Mina's page, and "No, take me back" returns there.
    await page.goto(`${config.baseUrl}${minaKnown}`);
    await Promise.all([page.waitForSelector(".forget-counts"), page.click("#forget-form input[type=submit]")]);
    result.forgetTitle = await text(page.locator("#content h1"));
    result.forgetCounts = await texts(page.locator(".forget-counts li"));
    await shot(page, "console-forget-confirmation.png");
    await Promise.all([page.waitForURL(`**${minaKnown}`), page.locator("a.cancel-link").click()]);
    result.forgetCancelled = path(page) === minaKnown;
    result.steps.push("forget-me confirmation");

    // 5. Blacklisting from the users list with its action.
    await page.goto(`${config.baseUrl}/admin/personas/discorduser/`);
    const listUrl = path(page);
    await page.locator("#result_list tbody tr", { hasText: config.listUser }).locator("input.action-select").check();
    await page.selectOption("select[name=action]", "blacklist_users");
    await Promise.all([page.waitForSelector("#blacklist-add"), page.click("button[name=index]")]);
    result.listTitle = await text(page.locator("#content h1"));
    await shot(page, "console-blacklist-action.png");
    // The action's form was posted to the list's own URL, so waiting for that URL alone returns at once:
    // wait for the form to go, then for the list it redirects back to.
    await Promise.all([
      page.waitForSelector("#blacklist-add", { state: "detached" }),
      page.click("#blacklist-add input[type=submit]"),
    ]);
    await page.waitForURL(`**${listUrl}`);
    result.listMessages = await messages(page);
    await shot(page, "console-blacklist-action-done.png");
    result.steps.push("blacklisted from the list");
    await context.close();
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
    try {
      if (page) await shot(page, "console-user-actions-failure.png");
    } catch {
      // the screenshot of a failure is a courtesy
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

main();
