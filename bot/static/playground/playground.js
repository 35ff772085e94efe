// The playground page (templates/playground/index.html). Plain JavaScript, no build step.
// Messages come from the page's initial JSON, from the answer to a send, and live from the channel's
// websocket (bot/playground/live.py): "message" (also when its transcript or notes change: why it was
// not answered or transcribed, stored with it so a reload shows them again), "typing" + "delta" (a
// reply streaming in), "record" (a new prompt record of this channel: its prompt panel is loaded). Every text is put into
// the page with textContent, never as HTML; only the server-rendered prompt panel is HTML.
(() => {
  "use strict";
  const root = document.getElementById("playground");
  if (!root || !root.dataset.channel) return;

  const REACTIONS = ["👍", "❤️", "😂", "😮", "🦉"];

  const list = document.getElementById("pg-messages");
  const form = document.getElementById("pg-composer");
  const content = document.getElementById("pg-content");
  const files = document.getElementById("pg-files");
  const identity = document.getElementById("pg-identity");
  const status = document.getElementById("pg-status");
  const livePaused = document.getElementById("pg-live-paused");
  const sendButton = document.getElementById("pg-send");
  const replyTo = document.getElementById("pg-reply-to");
  const replyBanner = document.getElementById("pg-reply-banner");
  const replyName = document.getElementById("pg-reply-name");
  const promptPanel = document.getElementById("pg-prompt");
  const recordPicker = document.getElementById("pg-records");
  const privacyNote = document.getElementById("pg-privacy-note");
  const names = JSON.parse(document.getElementById("pg-names").textContent);
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const botId = root.dataset.botId;
  const nodes = new Map(); // message id → element
  const streams = new Map(); // stream id → element of a reply still streaming in

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // Message text with <@id> mentions shown as @name, like Discord shows them.
  function renderText(target, text) {
    const pattern = /<@!?(\d+)>/g;
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      target.append(document.createTextNode(text.slice(last, match.index)));
      const name = names[match[1]];
      target.append(el("span", "pg-mention", name ? "@" + name : match[0]));
      last = match.index + match[0].length;
    }
    target.append(document.createTextNode(text.slice(last)));
  }

  function scrollToEnd() {
    list.scrollTop = list.scrollHeight;
  }

  function messageNode(message) {
    const node = el("div", "pg-msg kind-" + message.kind);
    node.dataset.id = message.id;
    node.id = "msg-" + message.id; // the inspector links a message here (#msg-<id>)
    const head = el("div", "pg-msg-head");
    head.append(el("span", "pg-author", message.author_name));
    if (message.kind !== "user") head.append(el("span", "pg-badge", message.kind === "persona" ? "persona" : "bot"));
    head.append(el("span", "muted", new Date(message.created_at_ms).toLocaleTimeString()));
    node.append(head);
    if (message.reply_to) {
      const quote = el("div", "pg-quote");
      quote.append(document.createTextNode("↪ " + message.reply_to.author_name + ": "));
      renderText(quote, message.reply_to.excerpt);
      node.append(quote);
    }
    const body = el("div", "pg-msg-body");
    renderText(body, message.content);
    node.append(body);
    if (message.attachments.length) {
      const box = el("div", "pg-attachments");
      for (const file of message.attachments) {
        if (file.content_type.startsWith("audio/")) {
          const audio = el("audio");
          audio.controls = true;
          audio.src = file.url;
          box.append(audio);
        } else if (file.content_type.startsWith("image/")) {
          const img = el("img");
          img.src = file.url;
          img.alt = file.name;
          box.append(img);
        }
        const link = el("a", null, "📎 " + file.name);
        link.href = file.url;
        box.append(link);
      }
      node.append(box);
    }
    if (message.transcript) node.append(el("div", "pg-transcript", "Transcript: " + message.transcript));
    // A persona's tool confirmations (a memory learned, a reminder set), shown as Discord shows embeds.
    for (const embed of message.embeds || []) {
      const card = el("div", "pg-embed");
      if (embed.title) card.append(el("div", "pg-embed-title", embed.title));
      if (embed.description) card.append(el("div", "pg-embed-body", embed.description));
      if (embed.footer_text) card.append(el("div", "pg-embed-footer", embed.footer_text));
      node.append(card);
    }
    const actions = el("div", "pg-actions");
    for (const reaction of message.reactions) {
      const button = el("button", "pg-reaction", reaction.emoji + " " + reaction.users.length);
      button.type = "button";
      button.title = reaction.users.map((id) => names[id] || id).join(", ");
      button.addEventListener("click", () => react(message.id, reaction.emoji));
      actions.append(button);
    }
    const reply = el("button", null, "Reply");
    reply.type = "button";
    reply.addEventListener("click", () => startReply(message));
    actions.append(reply);
    if (message.kind === "persona" && message.reply_to) {
      // A persona's answer: write it again for the same message (only the channel's latest turn).
      const again = el("button", "pg-regenerate", "🔄 Regenerate");
      again.type = "button";
      again.addEventListener("click", () => regenerate(message.id));
      actions.append(again);
    }
    const picker = el("select");
    picker.title = "React";
    picker.append(new Option("+ react", ""));
    for (const emoji of REACTIONS) picker.append(new Option(emoji, emoji));
    picker.addEventListener("change", () => {
      if (picker.value) react(message.id, picker.value);
      picker.value = "";
    });
    actions.append(picker);
    node.append(actions);
    for (const text of message.notes || []) node.append(el("div", "pg-note", text));
    return node;
  }

  function upsert(message, streamId) {
    const fresh = messageNode(message);
    const old = nodes.get(message.id) || (streamId && streams.get(streamId));
    if (streamId) streams.delete(streamId);
    if (old) old.replaceWith(fresh);
    else list.append(fresh);
    nodes.set(message.id, fresh);
    scrollToEnd();
  }

  function typing(event) {
    if (streams.has(event.stream_id)) return;
    const node = el("div", "pg-msg kind-persona streaming");
    const head = el("div", "pg-msg-head");
    head.append(el("span", "pg-author", event.persona), el("span", "muted", "is typing…"));
    node.append(head, el("div", "pg-msg-body", ""));
    streams.set(event.stream_id, node);
    list.append(node);
    scrollToEnd();
  }

  function delta(event) {
    const node = streams.get(event.stream_id);
    if (!node) return;
    node.querySelector(".pg-msg-body").textContent += event.text;
    scrollToEnd();
  }

  async function loadPanel(url) {
    const response = await fetch(url, { credentials: "same-origin" });
    if (response.ok) promptPanel.innerHTML = await response.text();
  }

  function addRecord(record) {
    if (![...recordPicker.options].some((o) => o.value === record.panel_url)) {
      const label = "#" + record.id + " " + record.persona + (record.error ? " (failed)" : "");
      recordPicker.prepend(new Option(label, record.panel_url));
      recordPicker.closest("label").hidden = false;
    }
    recordPicker.value = record.panel_url;
    return loadPanel(record.panel_url);
  }

  // A record summary of the turn feed (chatcontext/consumers.py) in the shape of the send answer's.
  function liveRecord(summary) {
    return {
      id: summary.id,
      persona: summary.persona_nickname,
      error: summary.failed ? "failed" : "",
      panel_url: root.dataset.panelUrl.replace("/0/", "/" + summary.id + "/"),
    };
  }

  function startReply(message) {
    replyTo.value = message.id;
    replyName.textContent = message.author_name;
    replyBanner.hidden = false;
    content.focus();
  }

  function stopReply() {
    replyTo.value = "";
    replyBanner.hidden = true;
  }

  async function post(url, data) {
    const response = await fetch(url, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf },
    });
    const payload = await response.json().catch(() => ({ error: "The server answered " + response.status + "." }));
    if (!response.ok) throw new Error(payload.error || "The server answered " + response.status + ".");
    return payload;
  }

  async function react(messageId, emoji) {
    const data = new FormData();
    data.append("identity", identity.value);
    data.append("emoji", emoji);
    try {
      const payload = await post(root.dataset.reactUrl.replace("MESSAGE_ID", messageId), data);
      upsert(payload.message);
    } catch (error) {
      status.textContent = error.message;
    }
  }

  async function regenerate(messageId) {
    const data = new FormData();
    data.append("identity", identity.value);
    status.textContent = "Writing a new version…";
    try {
      const payload = await post(root.dataset.regenerateUrl.replace("MESSAGE_ID", messageId), data);
      for (const message of payload.messages) upsert(message);
      for (const record of payload.records) addRecord(record);
      status.textContent = "";
    } catch (error) {
      status.textContent = error.message;
    }
  }

  async function send(event) {
    event.preventDefault();
    if (!content.value.trim() && !files.files.length) return;
    const data = new FormData(form);
    data.append("identity", identity.value);
    sendButton.disabled = true;
    status.textContent = files.files.length ? "Sending (audio is transcribed first)…" : "Sending…";
    try {
      const payload = await post(root.dataset.sendUrl, data);
      content.value = "";
      files.value = "";
      stopReply();
      for (const message of payload.messages) upsert(message);
      if (payload.records.length) await addRecord(payload.records[payload.records.length - 1]);
      // A slash command's answer is private, as Discord shows it only to whoever ran it.
      status.textContent = payload.command ? payload.command.text : "";
    } catch (error) {
      status.textContent = error.message;
    } finally {
      sendButton.disabled = false;
    }
  }

  function showPrivacy() {
    const option = identity.selectedOptions[0];
    const level = option ? option.dataset.privacy : "";
    privacyNote.hidden = !level || level === "MINIMAL";
    privacyNote.classList.toggle("full", level === "FULL");
    if (level === "FULL") {
      privacyNote.textContent = "Privacy level FULL: nothing this person writes reaches a prompt, and they cannot trigger a persona.";
    } else if (level === "PARTIAL") {
      privacyNote.textContent = "Privacy level PARTIAL: their messages reach the prompt, their personal details do not.";
    }
  }

  function connect(delay) {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(scheme + "://" + location.host + root.dataset.socketPath);
    socket.addEventListener("open", () => {
      root.classList.add("live");
      livePaused.hidden = true;
    });
    socket.addEventListener("message", (raw) => {
      const event = JSON.parse(raw.data);
      if (event.kind === "message") upsert(event.message, event.stream_id);
      else if (event.kind === "typing") typing(event);
      else if (event.kind === "delta") delta(event);
      else if (event.kind === "record") addRecord(liveRecord(event.record));
    });
    socket.addEventListener("close", (closed) => {
      root.classList.remove("live");
      // 4503: the server's channel layer (Redis) is unreachable (chatcontext.records.consumers.LIVE_PAUSED).
      if (closed.code === 4503) livePaused.hidden = false;
      if (closed.code !== 4403) setTimeout(() => connect(Math.min(delay * 2, 30000)), delay);
    });
  }

  for (const message of JSON.parse(document.getElementById("pg-initial-messages").textContent)) upsert(message);
  const linked = location.hash.startsWith("#msg-") && document.getElementById(location.hash.slice(1));
  if (linked) linked.scrollIntoView({ block: "center" });
  form.addEventListener("submit", send);
  content.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  document.getElementById("pg-reply-cancel").addEventListener("click", stopReply);
  document.getElementById("pg-mention").addEventListener("click", () => {
    content.value = content.value + (content.value && !content.value.endsWith(" ") ? " " : "") + "<@" + botId + "> ";
    content.focus();
  });
  recordPicker.addEventListener("change", () => loadPanel(recordPicker.value));
  identity.addEventListener("change", showPrivacy);
  showPrivacy();
  connect(1000);
})();
