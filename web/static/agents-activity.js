// The agents activity page: the stream of what the agents in one directory do, and who they are.
// Served only on devhostd's control origin. Text is always set as text, never as HTML.
(function () {
  "use strict";

  var MAX_ROWS = 2000;
  var FIRST_DELAY = 1000;
  var MAX_DELAY = 10000;
  var LIST_EVERY = 5000;

  var params = new URLSearchParams(location.search);
  var query = new URLSearchParams({
    pageURL: params.get("pageURL") || "",
    chatTarget: params.get("chatTarget") || "project"
  }).toString();

  var statusEl = document.getElementById("status");
  var eventsEl = document.getElementById("events");
  var emptyEl = document.getElementById("empty");
  var agentsEl = document.getElementById("agents");
  var agentsErrorEl = document.getElementById("agents-error");
  document.getElementById("where").textContent =
    (params.get("pageURL") || "") + " · " + (params.get("chatTarget") || "project");

  var delay = FIRST_DELAY;
  var connections = 0;

  function setStatus(state, text) {
    statusEl.dataset.state = state;
    statusEl.textContent = text;
  }

  function two(n) { return (n < 10 ? "0" : "") + n; }

  function clock(ms) {
    var d = new Date(ms);
    if (isNaN(d.getTime())) return "";
    return two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
  }

  function cell(row, className, text, title) {
    var td = document.createElement("td");
    td.className = className;
    td.textContent = text;
    if (title) td.title = title;
    row.appendChild(td);
    return td;
  }

  function addEvent(event) {
    if (!event || typeof event.eventType !== "string") return;
    var atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    var row = document.createElement("tr");
    row.className = "event";
    if (event.isError || event.eventType === "error") row.className += " error";
    if (event.eventType === "run_started" || event.eventType === "run_exited") row.className += " lifecycle";
    row.dataset.eventType = event.eventType;
    row.dataset.harness = String(event.harness || "");
    row.dataset.pid = String(event.pid || "");
    cell(row, "time", clock(event.timestamp), new Date(event.timestamp).toISOString());
    cell(row, "harness", String(event.harness || ""));
    cell(row, "agent", String(event.pid || ""));
    var kind = cell(row, "kind", event.eventType + (event.toolName ? " · " + event.toolName : ""));
    if (event.role) {
      var role = document.createElement("span");
      role.className = "role";
      role.textContent = " (" + event.role + ")";
      kind.appendChild(role);
    }
    cell(row, "text", typeof event.text === "string" ? event.text : "");
    eventsEl.appendChild(row);
    emptyEl.hidden = true;
    while (eventsEl.childElementCount > MAX_ROWS) eventsEl.removeChild(eventsEl.firstElementChild);
    if (atBottom) window.scrollTo(0, document.body.scrollHeight);
  }

  function connect() {
    setStatus("connecting", connections ? "reconnecting…" : "connecting…");
    var scheme = location.protocol === "https:" ? "wss:" : "ws:";
    var socket = new WebSocket(scheme + "//" + location.host + "/__devhost__/ws/agents/activity?" + query);
    socket.onopen = function () {
      connections += 1;
      delay = FIRST_DELAY;
      setStatus("live", "live");
    };
    socket.onmessage = function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      addEvent(event);
    };
    socket.onclose = function () {
      setStatus("reconnecting", "disconnected; retrying in " + Math.round(delay / 1000) + " s");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, MAX_DELAY);
    };
  }

  function ago(ms) {
    var seconds = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (seconds < 60) return seconds + " s ago";
    if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
    return Math.round(seconds / 3600) + " h ago";
  }

  function showAgents(answer) {
    agentsEl.textContent = "";
    var agents = (answer && answer.agents) || [];
    agents.forEach(function (agent) {
      var item = document.createElement("li");
      item.className = "agent";
      item.dataset.state = agent.state;
      item.dataset.harness = agent.harness;
      var state = document.createElement("span");
      state.className = "state state-" + agent.state;
      state.textContent = agent.state;
      item.appendChild(state);
      var rest = " " + agent.harness + (agent.name ? " · " + agent.name : "") +
        " · " + (agent.subdirectory === "." ? "here" : agent.subdirectory) + " · " + ago(agent.lastActivity) + (agent.isOwned ? " · this stack's chat" : "");
      item.appendChild(document.createTextNode(rest));
      agentsEl.appendChild(item);
    });
    if (!agents.length) {
      var none = document.createElement("li");
      none.className = "none";
      none.textContent = "no agents running in this directory";
      agentsEl.appendChild(none);
    }
    agentsErrorEl.hidden = !(answer && answer.error);
    agentsErrorEl.textContent = (answer && answer.error) || "";
  }

  function listAgents() {
    fetch("/__devhost__/agents?" + query, { cache: "no-store" })
      .then(function (response) { return response.json(); })
      .then(showAgents)
      .catch(function () { /* the stream's status already says the daemon is away */ })
      .then(function () { setTimeout(listAgents, LIST_EVERY); });
  }

  connect();
  listAgents();
})();
