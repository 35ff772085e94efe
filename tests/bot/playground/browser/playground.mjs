// Drives the playground in Debian's Chromium (headless) and prints one JSON result on stdout.
// tests/bot/playground/test_browser.py starts the server and asserts on the result; run by hand against
// `make run` with: BASE_URL=http://127.0.0.1:8000 PG_USERNAME=admin PG_PASSWORD=... node playground.mjs
//
// Scenario (issue 8 acceptance): log in to the admin, open the playground, pick the demo server,
// create a channel, speak as a MINIMAL user mentioning the persona, see the reply stream in and the
// prompt panel show that user's profile block; speak as the privacy-FULL user (not answered); speak
// as the first user again and check the FULL user's words are not in the new prompt panel.
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";

const config = {
  baseUrl: process.env.BASE_URL || "http://127.0.0.1:8000",
  username: process.env.PG_USERNAME || "admin",
  password: process.env.PG_PASSWORD || "",
  server: process.env.PG_SERVER || "Night Owls Demo",
  minimalId: process.env.PG_MINIMAL_ID || "554947007479939075", // the demo's Mina (load_demo.DEMO_USERS)
  fullId: process.env.PG_FULL_ID || "493428865499398150", // the demo's Rei
  profileMarker: process.env.PG_PROFILE_MARKER || "Pronouns: she/her",
  screenshot: process.env.PG_SCREENSHOT || "artifacts/playground.png",
  chromium: process.env.CHROMIUM || "/usr/bin/chromium",
};
const TIMEOUT_MS = 60_000;
const FIRST = "hello, I am studying for my exam tonight";
const SECRET = "my new address is 4 Harbor Lane";
const QUESTION = "tomori, did anyone post an address here?";

async function send(page, text, { mention }) {
  const before = await page.locator("#pg-prompt .pg-panel").getAttribute("data-record-id");
  if (mention) await page.click("#pg-mention");
  await page.locator("#pg-content").pressSequentially(text);
  const answered = page.waitForResponse((r) => r.url().includes("/messages/") && r.request().method() === "POST", {
    timeout: TIMEOUT_MS,
  });
  await page.click("#pg-send");
  const response = await answered;
  return { before, answer: await response.json() };
}

async function waitForNewPanel(page, before) {
  await page.waitForFunction(
    (old) => {
      const panel = document.querySelector("#pg-prompt .pg-panel");
      return panel && panel.dataset.recordId && panel.dataset.recordId !== old;
    },
    before,
    { timeout: TIMEOUT_MS },
  );
  return page.evaluate(() => {
    const panel = document.querySelector("#pg-prompt .pg-panel");
    const blocks = [...panel.querySelectorAll("tr.prompt-block")].map((row) => ({
      tag: row.querySelector(".tag").textContent.trim(),
      text: row.querySelector("pre").textContent,
    }));
    const exclusions = [...panel.querySelectorAll("tr.exclusion")].map((row) => row.textContent.replace(/\s+/g, " ").trim());
    return { recordId: panel.dataset.recordId, text: panel.textContent, blocks, exclusions };
  });
}

async function main() {
  const profile = mkdtempSync(join(tmpdir(), "pg-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: config.chromium,
    headless: true,
    viewport: { width: 1440, height: 1000 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const result = { ok: false, steps: [] };
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(TIMEOUT_MS);
  // Uncaught script errors and failed requests (the browser's own favicon probe aside).
  const pageErrors = [];
  const failedResponses = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  page.on("response", (response) => {
    if (response.status() >= 400 && !response.url().endsWith("/favicon.ico")) {
      failedResponses.push(`${response.status()} ${new URL(response.url()).pathname}`);
    }
  });
  try {
    await page.goto(`${config.baseUrl}/admin/login/?next=/playground/`);
    await page.fill("#id_username", config.username);
    await page.fill("#id_password", config.password);
    await Promise.all([page.waitForURL("**/playground/**"), page.click("input[type=submit]")]);
    result.steps.push("logged in");

    const serverValue = await page.$eval(
      "#pg-server",
      (select, name) => [...select.options].find((o) => o.textContent.trim() === name)?.value,
      config.server,
    );
    if (!serverValue) throw new Error(`server ${config.server} is not offered`);
    if ((await page.inputValue("#pg-server")) !== serverValue) {
      await Promise.all([page.waitForURL(`**server=${serverValue}**`), page.selectOption("#pg-server", serverValue)]);
    }
    result.echoBanner = (await page.locator("#pg-echo-banner").count()) > 0;
    result.personas = (await page.locator(".pg-persona strong").allTextContents()).map((s) => s.trim());

    await page.fill("#pg-new-channel-name", `browser-${Date.now()}`);
    await Promise.all([page.waitForURL("**channel=**"), page.click("#pg-new-channel button[type=submit]")]);
    await page.waitForFunction(() => document.getElementById("playground").classList.contains("live"));
    result.steps.push("channel created, websocket live");

    await page.selectOption("#pg-identity", config.minimalId);
    result.minimalIdentity = (await page.locator("#pg-identity option:checked").textContent()).trim();
    const streamed = page.waitForSelector(".pg-msg.streaming", { timeout: TIMEOUT_MS }).then(
      () => true,
      () => false,
    );
    const first = await send(page, FIRST, { mention: true });
    result.streamed = await streamed;
    result.firstReply = (
      await page.locator(".pg-msg.kind-persona:not(.streaming) .pg-msg-body").last().textContent()
    ).trim();
    const firstPanel = await waitForNewPanel(page, first.before);
    const profileBlock = firstPanel.blocks.find((b) => b.tag === "knowledge_users_in_conversation");
    result.firstPrompt = {
      recordId: firstPanel.recordId,
      profileBlock: profileBlock ? profileBlock.text : null,
      hasProfileMarker: Boolean(profileBlock && profileBlock.text.includes(config.profileMarker)),
      hasFirstMessage: firstPanel.text.includes(FIRST),
    };
    result.steps.push("minimal user answered");

    await page.selectOption("#pg-identity", config.fullId);
    result.fullIdentity = (await page.locator("#pg-identity option:checked").textContent()).trim();
    result.privacyNote = (await page.locator("#pg-privacy-note").textContent()).trim();
    const full = await send(page, SECRET, { mention: true });
    result.fullSkip = full.answer.skip;
    const sentId = full.answer.messages[0].id;
    result.fullNote = (await page.locator(`.pg-msg[data-id="${sentId}"] .pg-note`).textContent()).trim();
    result.steps.push("FULL user not answered");
    await page.reload();
    await page.waitForFunction(() => document.getElementById("playground").classList.contains("live"));
    result.fullNoteAfterReload = (await page.locator(`.pg-msg[data-id="${sentId}"] .pg-note`).textContent()).trim();
    result.steps.push("the note is still there after a reload");

    await page.selectOption("#pg-identity", config.minimalId);
    const second = await send(page, QUESTION, { mention: false });
    const secondPanel = await waitForNewPanel(page, second.before);
    result.secondPrompt = {
      recordId: secondPanel.recordId,
      hasQuestion: secondPanel.text.includes(QUESTION),
      hasSecret: secondPanel.text.includes(SECRET) || secondPanel.text.includes("Harbor Lane"),
      fullUserExcluded: secondPanel.exclusions.some((row) => row.includes(config.fullId) && row.includes("privacy_full")),
    };
    result.secretShownInConversation = (await page.locator("#pg-messages").textContent()).includes(SECRET);
    result.steps.push("FULL user's message absent from the next prompt");
    await page.waitForTimeout(300); // let the last streamed words settle before the picture
    mkdirSync(dirname(config.screenshot), { recursive: true });
    await page.screenshot({ path: config.screenshot });
    result.screenshot = config.screenshot;

    // The turn's record in the inspector, with its tokens and cost, and the server list's usage.
    await page.goto(`${config.baseUrl}/admin/chatcontext/promptrecord/${secondPanel.recordId}/change/`);
    result.recordTokens = (await page.locator("td .record-tokens").first().textContent()).trim();
    await page.screenshot({ path: join(dirname(config.screenshot), "inspector-record-cost.png"), fullPage: true });
    await page.goto(`${config.baseUrl}/admin/personas/server/`);
    result.serverUsageDay = (await page.locator("td.field-usage_day").first().innerText()).trim();
    await page.screenshot({ path: join(dirname(config.screenshot), "server-list-usage.png"), fullPage: true });
    result.steps.push("record cost and server usage shown");
    result.ok = true;
  } catch (error) {
    result.error = String(error && error.stack ? error.stack : error);
    try {
      mkdirSync(dirname(config.screenshot), { recursive: true });
      await page.screenshot({ path: config.screenshot });
      result.screenshot = config.screenshot;
    } catch {
      // the screenshot of a failure is a courtesy
    }
  } finally {
    result.pageErrors = pageErrors;
    result.failedResponses = failedResponses;
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

main();
