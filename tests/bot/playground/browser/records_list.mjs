// The records list of the moderators' console (issue 32 item 4) in Debian's Chromium (headless), at
// 1280 px; prints one JSON result on stdout. tests/bot/playground/test_records_list_browser.py starts the
// server (demo plus tests/bot/playground/records_list_setup.py) and asserts on it.
//
// The superuser opens the prompt records: what each column shows and where it ends, the failed-turn
// and channel filters, then picks two turns and compares them with the "Compare the two selected"
// action; measures the users, memories and servers lists; then opens the playground on a 390 px phone
// screen. Screenshots go to ARTIFACTS.
import { runWalk } from "./console_session.mjs";

const config = {
  baseUrl: process.env.BASE_URL || "http://127.0.0.1:8000",
  username: process.env.PG_USERNAME || "admin",
  password: process.env.PG_PASSWORD || "",
  firstTrigger: process.env.PG_FIRST_TRIGGER || "Good evening!",
  secondTrigger: process.env.PG_SECOND_TRIGGER || "",
  artifacts: process.env.PG_ARTIFACTS || "artifacts",
  chromium: process.env.CHROMIUM || "/usr/bin/chromium",
};
const WIDTH = 1280;
const PHONE_WIDTH = 390;
const RECORDS = "/admin/chatcontext/promptrecord/";
const LISTS = { users: "/admin/personas/discorduser/", memories: "/admin/personas/personalmemory/", servers: "/admin/personas/server/" };

const clean = (s) => (s || "").replace(/\s+/g, " ").trim();

// Each row's cells by column; the preview column as its trigger and reply lines, and whether each
// line is cut (wider than its cell) or shown whole. 
async function rows(page) {
  return page.$$eval("#result_list tbody tr", (trs) =>
    trs.map((tr) => {
      const cell = (name) => tr.querySelector(`.field-${name}`);
      const line = (selector) => {
        const el = cell("turn").querySelector(selector);
        return { text: el.textContent.trim(), title: el.title, cut: el.scrollWidth > el.clientWidth };
      };
      return {
        ...Object.fromEntries(["persona_name", "channel", "tokens", "cost", "latency", "failed"].map((n) => [n, cell(n).textContent.trim()])),
        trigger: line(".turn-trigger"),
        reply: line(".turn-reply"),
      };
    }),
  );
}

// Whether the list scrolls sideways inside its box, and where each header ends on the screen.
async function fit(page) {
  return page.evaluate(() => {
    const box = document.querySelector("#changelist .results");
    return {
      pageWidth: document.documentElement.scrollWidth,
      overflow: box ? box.scrollWidth - box.clientWidth : null,
      rightEdges: [...document.querySelectorAll("#result_list thead th")].map((th) => Math.round(th.getBoundingClientRect().right)),
    };
  });
}

async function scenario(browser, result, walk) {
  const shot = (page, name) => walk.shot(page, name, { fullPage: false });
  const signIn = (page, next) => walk.signIn(page, config.username, config.password, next);
  result.listFits = {};
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 900 } });
  const page = await walk.newPage(context);
  await signIn(page, "/admin/");
  await shot(page, "records-admin-home.png");

  // 1. The list: every column's right edge, the rows, the filters on offer.
  await page.goto(`${config.baseUrl}${RECORDS}`);
  result.recordsFit = await fit(page);
  result.columns = await page.$$eval("#result_list thead th", (ths) => ths.map((th) => th.className.match(/column-(\S+)/)?.[1] ?? ""));
  result.rows = await rows(page);
  result.pageText = clean(await page.locator("#content").textContent());
  result.filterTitles = (await page.locator("#changelist-filter details summary").allTextContents()).map(clean);
  await shot(page, "records-list-1280.png");

  // 2. Filters: failed turns, then one channel.
  await Promise.all([page.waitForURL("**failed=yes**"), page.getByRole("link", { name: "Failed turns" }).click()]);
  result.failedRows = await rows(page);
  await shot(page, "records-list-failed.png");
  await page.goto(`${config.baseUrl}${RECORDS}`);
  await Promise.all([page.waitForURL("**channel=**"), page.locator("#changelist-filter a", { hasText: "#lounge" }).click()]);
  result.loungeRows = await rows(page);

  // 3. One turn selected: the action asks for two.
  await page.goto(`${config.baseUrl}${RECORDS}`);
  const check = (text) => page.locator("#result_list tbody tr", { hasText: text }).locator("input.action-select").check();
  await check(config.firstTrigger);
  await page.selectOption("select[name=action]", "compare_selected");
  await Promise.all([page.waitForLoadState("load"), page.click("button[name=index]")]);
  result.oneSelectedMessages = (await page.locator("ul.messagelist li").allTextContents()).map(clean);

  // 4. Two turns selected: the later one's inspector page, diffed against the earlier one.
  await check(config.firstTrigger);
  await check(config.secondTrigger);
  await page.selectOption("select[name=action]", "compare_selected");
  await Promise.all([page.waitForURL("**/change/?against=**"), page.click("button[name=index]")]);
  result.compareUrl = new URL(page.url()).pathname + new URL(page.url()).search;
  result.diffHeading = clean(await page.locator("h2#diff").textContent());
  result.diffLines = (await page.locator(".diff div").allTextContents()).map((s) => s.trim());
  await page.locator("h2#diff").scrollIntoViewIfNeeded();
  await shot(page, "records-compare.png");

  // 5. The other long lists fit the window too.
  for (const [name, path] of Object.entries(LISTS)) {
    await page.goto(`${config.baseUrl}${path}`);
    result.listFits[name] = await fit(page);
    await shot(page, `records-${name}-list-1280.png`);
  }
  result.viewSiteHref = await page.locator("#user-tools a", { hasText: "View site" }).getAttribute("href");
  await context.close();

  // 6. The playground on a 390 px phone: its rows wrap instead of running off the screen.
  const phone = await browser.newContext({ viewport: { width: PHONE_WIDTH, height: 844 } });
  const small = await walk.newPage(phone);
  await signIn(small, "/playground/");
  result.phoneWidth = await small.evaluate(() => document.documentElement.scrollWidth);
  result.phoneLabels = await small.$$eval("label", (labels) => labels.map((l) => l.textContent.replace(/\s+/g, " ").trim()));
  result.phoneSpeaker = await small.$eval("#pg-identity option:checked", (o) => o.textContent.trim());
  await walk.shot(small, "records-playground-390.png");
  result.favicon = (await small.goto(`${config.baseUrl}/favicon.ico`)).status();
  await phone.close();
}

runWalk(
  { chromiumPath: config.chromium, baseUrl: config.baseUrl, artifacts: config.artifacts, failureShot: "records-failure.png" },
  scenario,
);
