// podsched's live cluster view: one EventSource('/api/stream'), a `snapshot` then `delta` events applied
// to the page's own copy of the view model (docs/ui.md has the wire contract).
//
// How it scales (5000 nodes, 10000+ pods must not freeze a browser):
// - Applying a delta only records what changed (dirty sets); one requestAnimationFrame renders all the
//   deltas that arrived since the last frame, and each panel re-renders only when its part changed.
// - The node grid is virtualized: cards have a fixed size and sit at absolute positions in a canvas as tall
//   as all the rows; only the rows in view plus ROW_MARGIN above and below are in the DOM (a few dozen
//   cards, whatever the cluster's size). Scrolling moves cards in and out; a changed node re-renders only
//   when its card is in the DOM. #node-filter narrows the list (name or label substring) to bring any node
//   into view.
// - A card shows at most MAX_CHIPS pod chips, then "+k more"; the pending list at most MAX_PENDING rows,
//   then "and k more"; the event stream keeps the last MAX_EVENTS events and appends only new rows.
// - The pending set, the per-node filter text and each node's rank in the grid (needs a look, has pods,
//   empty) are kept up to date incrementally, per upserted object, never by scanning every pod on each
//   delta; only the filtered node order is re-sorted, and only when nodes are added or removed, a node's
//   rank changes or the filter changes.
// - One tooltip element and one click handler serve every chip (event delegation).

const CARD_W = 292;          // the narrowest card plus gap, px; columns stretch to fill the width
const CARD_H = 182;          // card height plus gap, px (.node-card in app.css is 170px tall)
const CARD_GAP = 12;
const ROW_MARGIN = 2;        // rows rendered above and below the visible ones
const MAX_CHIPS = 40;
const MAX_DEVICES = 12;       // device tags per card, then "+k more"
const MAX_PENDING = 200;
const MAX_EVENTS = 200;
const MAX_PREEMPTIONS = 50;
const PREEMPTION_REASONS = new Set(["Preempted", "Evicted"]);
const BASE_RESOURCES = ["cpu", "memory", "pods"];
const HIDDEN_RESOURCES = new Set(["ephemeral-storage"]);

// Priority bands, highest first: chips are coloured by the band their pod's priority falls in.
const PRIORITY_BANDS = [
  { min: 2000000000, cls: "prio-system", label: "system (≥ 2e9)" },
  { min: 100000, cls: "prio-critical", label: "≥ 100000" },
  { min: 1000, cls: "prio-high", label: "≥ 1000" },
  { min: 1, cls: "prio-medium", label: "1 – 999" },
  { min: 0, cls: "prio-default", label: "0" },
  { min: -Infinity, cls: "prio-low", label: "< 0 (preemptible)" },
];

const state = {
  revision: 0,
  server: "",
  nodes: new Map(),
  pods: new Map(),
  pdbs: new Map(),
  podGroups: new Map(),
  leadership: null,
  apiServer: null,
  events: [],
  summary: null,
};

// Derived, maintained incrementally.
const pendingKeys = new Set();
const nodeSearchText = new Map();   // node name -> lowercase "name\nk=v\n..." for #node-filter
let nodeOrder = [];                 // filtered, sorted node names (the grid's rows)
// The grid shows first the nodes that need a look (NotReady, or a pending pod nominated to them), then
// those with pods, then the empty ones, each by name: a node moves only when its rank changes.
const RANK_ATTENTION = 0;
const RANK_PODS = 1;
const RANK_EMPTY = 2;
const nodeRank = new Map();         // node name -> its rank
const nominatedTo = new Map();      // node name -> how many pending pods are nominated to it
const podNomination = new Map();    // pending pod key -> the node it is nominated to

// What changed since the last frame.
const dirty = {
  all: true,
  summary: false,
  nodeOrder: false,
  nodes: new Set(),
  pending: false,
  leadership: false,
  pdbs: false,
  podGroups: false,
  events: 0,          // number of new events appended
  eventsReset: false,
};

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------------------------------------
// DOM helpers: text always through textContent, never innerHTML, since every name comes from the cluster.

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k === "style") el.setAttribute("style", v);
      else if (k.startsWith("data-") || k.startsWith("aria-") || k === "role" || k === "title" || k === "type")
        el.setAttribute(k, v === true ? "" : v);
      else el[k] = v;
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function setText(id, text) {
  const el = $(id);
  if (el.textContent !== text) el.textContent = text;
}

// ---------------------------------------------------------------------------------------------------------
// Formatting

function fmtQuantity(resource, value) {
  if (value === undefined || value === null) return "0";
  if (resource === "cpu") {
    if (value % 1000 === 0) return String(value / 1000);
    if (value < 1000) return `${value}m`;
    return String(Math.round(value / 10) / 100);
  }
  if (resource === "memory" || resource === "ephemeral-storage" || resource.startsWith("hugepages-")) {
    return fmtBytes(value);
  }
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function fmtBytes(bytes) {
  const units = ["B", "Ki", "Mi", "Gi", "Ti", "Pi"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v >= 100 || Number.isInteger(v) ? Math.round(v) : v.toFixed(1)}${units[i]}`;
}

function resourceLabel(resource) {
  if (resource === "cpu") return "CPU";
  if (resource === "memory") return "Mem";
  if (resource === "pods") return "Pods";
  if (resource === "nvidia.com/gpu") return "GPU";
  const slash = resource.lastIndexOf("/");
  return slash >= 0 ? resource.slice(slash + 1) : resource;
}

function pct(used, total) {
  if (!total) return used ? 100 : 0;
  return Math.min(100, (used / total) * 100);
}

function fmtTime(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(11, 19);
}

function fmtAge(iso) {
  const span = fmtSpan(iso);
  return span === "0s" ? "just now" : span && `${span} ago`;
}

// How long ago `iso` was, by this browser's clock: "12s", "5m", "3h" ("" when unknown).
function fmtSpan(iso) {
  if (!iso) return "";
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (Number.isNaN(seconds)) return "";
  if (seconds <= 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

function priorityBand(priority) {
  const p = priority ?? 0;
  return PRIORITY_BANDS.find((band) => p >= band.min);
}

function extendedResources(quantities) {
  return Object.keys(quantities || {})
    .filter((r) => !BASE_RESOURCES.includes(r) && !HIDDEN_RESOURCES.has(r) && !r.startsWith("hugepages-"))
    .sort();
}

// ---------------------------------------------------------------------------------------------------------
// Applying the stream

function indexNode(name, node) {
  const labels = Object.entries(node.labels || {}).map(([k, v]) => `${k}=${v}`);
  nodeSearchText.set(name, [name, ...labels].join("\n").toLowerCase());
}

function indexPod(key, pod) {
  if (pod && pod.pending) pendingKeys.add(key);
  else pendingKeys.delete(key);
  const nominated = pod && pod.pending && pod.nominatedNode ? pod.nominatedNode : "";
  const before = podNomination.get(key) || "";
  if (nominated === before) return;
  if (before) {
    const left = nominatedTo.get(before) - 1;
    if (left > 0) nominatedTo.set(before, left);
    else nominatedTo.delete(before);
    rankNode(before);
  }
  if (nominated) {
    podNomination.set(key, nominated);
    nominatedTo.set(nominated, (nominatedTo.get(nominated) || 0) + 1);
    rankNode(nominated);
  } else {
    podNomination.delete(key);
  }
}

function rankNode(name) {
  const node = state.nodes.get(name);
  if (!node) {
    nodeRank.delete(name);
    return;
  }
  let rank = RANK_EMPTY;
  if (node.readiness === "NotReady" || nominatedTo.has(name)) rank = RANK_ATTENTION;
  else if (node.pods && node.pods.length) rank = RANK_PODS;
  if (nodeRank.get(name) === rank) return;
  nodeRank.set(name, rank);
  dirty.nodeOrder = true;
}

function applySnapshot(snapshot) {
  state.revision = snapshot.revision ?? 0;
  state.server = snapshot.server ?? "";
  state.nodes = new Map(Object.entries(snapshot.nodes || {}));
  state.pods = new Map(Object.entries(snapshot.pods || {}));
  state.pdbs = new Map(Object.entries(snapshot.pdbs || {}));
  state.podGroups = new Map(Object.entries(snapshot.podGroups || {}));
  state.leadership = snapshot.leadership || null;
  state.apiServer = snapshot.apiServer || null;
  state.events = (snapshot.events || []).slice(-MAX_EVENTS);
  state.summary = snapshot.summary || null;
  nodeSearchText.clear();
  for (const [name, node] of state.nodes) indexNode(name, node);
  pendingKeys.clear();
  nodeRank.clear();
  nominatedTo.clear();
  podNomination.clear();
  for (const [key, pod] of state.pods) indexPod(key, pod);
  for (const name of state.nodes.keys()) rankNode(name);
  dirty.all = true;
  scheduleRender();
}

function applyCollection(map, change, onUpsert, onRemove) {
  if (!change) return false;
  for (const key of change.remove || []) {
    map.delete(key);
    onRemove(key);
  }
  for (const [key, obj] of Object.entries(change.upsert || {})) {
    map.set(key, obj);
    onUpsert(key, obj);
  }
  return Boolean((change.remove && change.remove.length) || (change.upsert && Object.keys(change.upsert).length));
}

function applyDelta(delta) {
  state.revision = delta.revision ?? state.revision;
  applyCollection(
    state.nodes,
    delta.nodes,
    (name, node) => {
      const known = nodeSearchText.get(name);
      indexNode(name, node);
      if (known !== nodeSearchText.get(name)) dirty.nodeOrder = true;
      rankNode(name);
      dirty.nodes.add(name);
    },
    (name) => {
      nodeSearchText.delete(name);
      nodeRank.delete(name);
      dirty.nodeOrder = true;
      dirty.nodes.add(name);
    },
  );
  const podsChanged = applyCollection(
    state.pods,
    delta.pods,
    (key, pod) => {
      if (pod.pending || pendingKeys.has(key)) dirty.pending = true;
      indexPod(key, pod);
      if (pod.node) dirty.nodes.add(pod.node);   // chip colours and tooltips follow the pod
    },
    (key) => {
      if (pendingKeys.has(key)) dirty.pending = true;
      indexPod(key, null);
    },
  );
  if (podsChanged) {
    if (details.key && changedKeys(delta.pods).has(details.key)) details.stale = true;
  }
  if (applyCollection(state.pdbs, delta.pdbs, () => {}, () => {})) dirty.pdbs = true;
  if (applyCollection(state.podGroups, delta.podGroups, () => {}, () => {})) dirty.podGroups = true;
  if (delta.leadership) {
    state.leadership = delta.leadership;
    dirty.leadership = true;
  }
  if (delta.apiServer) {
    state.apiServer = delta.apiServer;
    dirty.summary = true;
  }
  if (delta.events && delta.events.length) {
    // An event seen again (its count went up) moves to the end instead of showing twice.
    const again = new Set(delta.events.map((e) => e.key));
    if (state.events.some((e) => again.has(e.key))) {
      state.events = state.events.filter((e) => !again.has(e.key));
      dirty.eventsReset = true;
    }
    state.events.push(...delta.events);
    if (state.events.length > MAX_EVENTS) state.events.splice(0, state.events.length - MAX_EVENTS);
    dirty.events += delta.events.length;
  }
  if (delta.summary) {
    state.summary = delta.summary;
    dirty.summary = true;
  }
  scheduleRender();
}

function changedKeys(change) {
  const keys = new Set(change ? change.remove || [] : []);
  for (const key of Object.keys((change && change.upsert) || {})) keys.add(key);
  return keys;
}

// ---------------------------------------------------------------------------------------------------------
// The connection: the page closes a failed EventSource itself and opens a new one after a backoff, so it
// recovers the same way whether the server dropped the stream or refused it, and a new snapshot replaces
// everything it knew.

let source = null;
let retryDelay = 500;

function setStatus(status) {
  const el = $("status");
  el.textContent = status;
  el.className = `status status-${status}`;
}

function connect() {
  source = new EventSource("/api/stream");
  source.addEventListener("snapshot", (e) => {
    applySnapshot(JSON.parse(e.data));
    retryDelay = 500;
    setStatus("live");
  });
  source.addEventListener("delta", (e) => applyDelta(JSON.parse(e.data)));
  source.onerror = () => {
    source.close();
    setStatus("reconnecting");
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 5000);
  };
}

// ---------------------------------------------------------------------------------------------------------
// Rendering: one frame renders everything that changed since the previous one.

let frameRequested = false;

function scheduleRender() {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(render);
}

function render() {
  frameRequested = false;
  const all = dirty.all;
  if (all || dirty.summary) renderSummary();
  if (all || dirty.nodeOrder || filterChanged) recomputeNodeOrder();
  renderGrid(all);
  if (all || dirty.pending) renderPending();
  if (all || dirty.leadership) renderLeadership();
  if (all || dirty.pdbs) renderPdbs();
  if (all || dirty.podGroups) renderPodGroups();
  if (all || dirty.events) {
    renderEvents(dirty.events, all || dirty.eventsReset);
    renderPreemptions();
  }
  if (details.stale) refreshDetails();
  dirty.all = false;
  dirty.summary = dirty.nodeOrder = dirty.pending = dirty.leadership = dirty.pdbs = dirty.podGroups = false;
  dirty.events = 0;
  dirty.eventsReset = false;
  dirty.nodes.clear();
}

// The page's own stream can be live while the view's server has lost the API server: say so, or the
// numbers on the page would look current while they are not.
function renderApiServer() {
  const api = state.apiServer;
  const el = $("api-server");
  const down = Boolean(api && api.reachable === false);
  el.hidden = !down;
  el.textContent = down ? `API server unreachable since ${fmtTime(api.since)}` : "";
  el.title = down ? api.error || "" : "";
}

function renderSummary() {
  const s = state.summary;
  setText("server", state.server ? `watching ${state.server}` : "");
  setText("revision", `rev ${state.revision}`);
  renderApiServer();
  if (!s) return;
  setText("sum-nodes", `${s.readyNodes}/${s.nodes}`);
  setText("sum-pods", `${s.bound}/${s.pods}`);
  setText("sum-pending", String(s.pending));
  $("sum-pending").classList.toggle("warn", s.pending > 0);
  setText("sum-preemptions", String(s.preemptions ?? 0));
  const alloc = s.allocatable || {};
  const req = s.requested || {};
  const ratio = (r) => `${fmtQuantity(r, req[r] || 0)} / ${fmtQuantity(r, alloc[r] || 0)} (${Math.round(pct(req[r] || 0, alloc[r] || 0))}%)`;
  setText("sum-cpu", ratio("cpu"));
  setText("sum-memory", ratio("memory"));
  const extended = extendedResources(alloc);
  $("sum-extended-wrap").hidden = extended.length === 0;
  if (extended.length) {
    $("sum-extended-wrap").querySelector("dt").textContent =
      extended.length === 1 ? resourceLabel(extended[0]) : "Extended";
    setText("sum-extended", extended.map((r) => (extended.length === 1 ? ratio(r) : `${resourceLabel(r)} ${ratio(r)}`)).join(" · "));
  }
  setText("preemption-count", s.preemptions ? `(${s.preemptions})` : "");
}

// --- the node grid -----------------------------------------------------------------------------------------

const byNaturalOrder = new Intl.Collator(undefined, { numeric: true });   // node-2 before node-10
const cards = new Map();      // node name -> card element, only the ones in the DOM
let filterText = "";
let filterChanged = false;
let lastRange = "";

function recomputeNodeOrder() {
  filterChanged = false;
  const names = [];
  for (const name of state.nodes.keys()) {
    if (!filterText || nodeSearchText.get(name).includes(filterText)) names.push(name);
  }
  names.sort((a, b) => (nodeRank.get(a) ?? RANK_EMPTY) - (nodeRank.get(b) ?? RANK_EMPTY) || byNaturalOrder.compare(a, b));
  nodeOrder = names;
  lastRange = "";
  setText("node-count", filterText ? `(${names.length} of ${state.nodes.size})` : `(${state.nodes.size})`);
}

function gridGeometry() {
  const scroller = $("nodes");
  const columns = Math.max(1, Math.floor(scroller.clientWidth / CARD_W));
  const cellWidth = Math.floor(scroller.clientWidth / columns);
  const rows = Math.ceil(nodeOrder.length / columns);
  const first = Math.max(0, Math.floor(scroller.scrollTop / CARD_H) - ROW_MARGIN);
  const last = Math.min(rows, Math.ceil((scroller.scrollTop + scroller.clientHeight) / CARD_H) + ROW_MARGIN);
  return { columns, cellWidth, rows, first, last };
}

function renderGrid(all) {
  const { columns, cellWidth, rows, first, last } = gridGeometry();
  const canvas = $("node-canvas");
  canvas.style.height = `${rows * CARD_H}px`;
  canvas.style.setProperty("--card-width", `${cellWidth - CARD_GAP}px`);
  const range = `${cellWidth}:${columns}:${first}:${last}:${nodeOrder.length}`;
  if (range === lastRange && !all) {
    // Same cards in view: re-render only the changed nodes that are among them.
    for (const name of dirty.nodes) {
      const card = cards.get(name);
      if (card && state.nodes.has(name)) card.replaceWith(placeCard(name, card.dataset.index, columns, cellWidth));
    }
    return;
  }
  lastRange = range;
  const wanted = new Map();
  for (let i = first * columns; i < Math.min(nodeOrder.length, last * columns); i += 1) wanted.set(nodeOrder[i], i);
  for (const [name, card] of cards) {
    if (!wanted.has(name)) {
      card.remove();
      cards.delete(name);
    }
  }
  const fragment = document.createDocumentFragment();
  for (const [name, index] of wanted) {
    const card = cards.get(name);
    if (card && !all && !dirty.nodes.has(name)) {
      positionCard(card, index, columns, cellWidth);
      continue;
    }
    const fresh = placeCard(name, index, columns, cellWidth);
    if (card) card.replaceWith(fresh);
    else fragment.append(fresh);
  }
  canvas.append(fragment);
}

function positionCard(card, index, columns, cellWidth) {
  card.dataset.index = String(index);
  card.style.transform = `translate(${(index % columns) * cellWidth}px, ${Math.floor(index / columns) * CARD_H}px)`;
}

function placeCard(name, index, columns, cellWidth) {
  const card = nodeCard(state.nodes.get(name));
  positionCard(card, Number(index), columns, cellWidth);
  cards.set(name, card);
  return card;
}

function nodeCard(node) {
  const badges = h("span", { class: "badges" });
  const readiness = node.readiness || (node.ready ? "Ready" : "NotReady");
  const readinessClass = { Ready: "ok", NotReady: "bad" }[readiness] || "muted";
  badges.append(h("span", {
    class: `badge ${readinessClass}`, text: readiness,
    title: readiness === "Unknown" ? "no Ready condition: the scheduler places pods here all the same" : "",
  }));
  if (node.unschedulable) badges.append(h("span", { class: "badge warn", text: "Cordoned", title: "unschedulable" }));
  if (node.taints && node.taints.length) {
    badges.append(h("span", {
      class: "badge taint",
      text: node.taints.length === 1 ? "1 taint" : `${node.taints.length} taints`,
      title: node.taints.join("\n"),
    }));
  }
  const bars = h("div", { class: "bars" });
  const allocatable = node.allocatable || {};
  const requested = node.requested || {};
  for (const r of [...BASE_RESOURCES, ...extendedResources(allocatable)]) {
    const used = requested[r] || 0;
    const total = allocatable[r] || 0;
    const p = pct(used, total);
    bars.append(h("div", { class: "bar-row", title: `${r}: ${fmtQuantity(r, used)} of ${fmtQuantity(r, total)} requested` },
      h("span", { class: "bar-label", text: resourceLabel(r) }),
      h("span", { class: "bar", role: "meter", "aria-label": `${r} requested`, "aria-valuemin": "0", "aria-valuemax": String(total), "aria-valuenow": String(used) },
        h("span", { class: `fill ${p >= 90 ? "hot" : p >= 70 ? "warm" : ""}`, style: `width:${p.toFixed(1)}%` })),
      h("span", { class: "bar-value", text: `${fmtQuantity(r, used)}/${fmtQuantity(r, total)}` })));
  }
  const devices = deviceTags(node.devices || []);
  const chips = h("div", { class: "chips" });
  const podKeys = node.pods || [];
  for (const key of podKeys.slice(0, MAX_CHIPS)) chips.append(podChip(key));
  if (podKeys.length > MAX_CHIPS) chips.append(h("span", { class: "more", text: `+${podKeys.length - MAX_CHIPS} more` }));
  const cls = ["node-card"];
  if (node.readiness === "NotReady") cls.push("not-ready");
  if (node.unschedulable) cls.push("cordoned");
  return h("article", { class: cls.join(" "), "data-node": node.name, "aria-label": `node ${node.name}` },
    h("header", { class: "card-head" }, h("span", { class: "node-name mono", text: node.name, title: node.name }), badges),
    bars, devices, chips);
}

// A node's devices (its ResourceSlices'): one tag each, free, held (by a claim and its pods) or shared by
// several claims at once; the tooltip names every holder.
function deviceTags(devices) {
  if (!devices.length) return null;
  const row = h("div", { class: "devices" });
  for (const device of devices.slice(0, MAX_DEVICES)) {
    const holders = device.holders || [];
    const id = `${device.driver}/${device.pool}/${device.name}`;
    const state = !holders.length ? "free" : device.shared ? "shared" : "held";
    const lines = holders.map((holder) => {
      const share = holder.shareID ? ` (share ${holder.shareID})` : "";
      const pods = holder.pods.length ? ` for ${holder.pods.join(", ")}` : "";
      return `${holder.claim}${share}${pods}`;
    });
    const title = [id + (device.shared ? " (shared)" : ""), ...(lines.length ? lines : ["free"])].join("\n");
    const text = device.shared && holders.length ? `${device.name} (${holders.length})` : device.name;
    row.append(h("span", {
      class: `device ${state}`, text, title, "data-device": id,
      "data-holders": holders.map((holder) => holder.pods.join(" ")).join(" ").trim(),
    }));
  }
  if (devices.length > MAX_DEVICES) row.append(h("span", { class: "more", text: `+${devices.length - MAX_DEVICES} more` }));
  return row;
}

function podChip(key) {
  const pod = state.pods.get(key);
  const band = priorityBand(pod ? pod.priority : 0);
  const cls = ["chip", band.cls];
  if (pod && pod.terminating) cls.push("terminating");
  if (pod && pod.phase && pod.phase !== "Running" && pod.phase !== "Pending") cls.push("done");
  return h("button", { type: "button", class: cls.join(" "), "data-pod": key, "aria-label": `pod ${key}` });
}

// --- the side panels ----------------------------------------------------------------------------------------

function renderPending() {
  const keys = [...pendingKeys];
  const pods = keys.map((k) => state.pods.get(k)).filter(Boolean);
  pods.sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0) || a.key.localeCompare(b.key));
  const rows = pods.slice(0, MAX_PENDING).map((pod) => {
    const band = priorityBand(pod.priority);
    return h("li", { "data-pending": pod.key },
      h("button", { type: "button", class: "row-button", "data-open-pod": pod.key },
        h("span", { class: "row-title" },
          h("span", { class: `dot ${band.cls}`, "aria-hidden": "true" }),
          h("span", { class: "mono", text: pod.key }),
          h("span", { class: "muted", text: ` prio ${pod.priority ?? 0}` }),
          pod.nominatedNode ? h("span", { class: "badge", text: `→ ${pod.nominatedNode}`, title: "nominated node" }) : null,
          pod.podGroup ? h("span", { class: "badge", text: pod.podGroup, title: "pod group" }) : null),
        h("span", { class: "reason" },
          pod.reason ? h("strong", { text: `${pod.reason}: ` }) : null,
          pod.message || "waiting to be scheduled")));
  });
  $("pending").replaceChildren(...rows);
  setText("pending-count", `(${pods.length})`);
  const more = $("pending-more");
  more.hidden = pods.length <= MAX_PENDING;
  more.textContent = `and ${pods.length - MAX_PENDING} more`;
}

function renderLeadership() {
  const l = state.leadership;
  setText("leader-holder", l && l.holder ? l.holder : "none");
  $("leader-holder").classList.toggle("leaderless", !(l && l.holder));
  setText("leader-token", l && l.holder !== undefined ? String(l.token ?? "–") : "–");
  setText("leader-lease", l ? `${l.lease} (${l.leaseDurationSeconds ?? "?"}s, ${l.transitions ?? 0} transitions)` : "–");
  renderRenewAge();
  $("leader-replicas").replaceChildren(...replicaStates(l).map(([id, st, lateSince]) =>
    h("li", {
      class: `replica ${st}`, "data-replica": id, "data-state": st, "data-renewing": lateSince ? "false" : "true",
      title: `${id}: ${st}${lateSince ? `, last renewed ${lateSince}` : ""}`,
    },
      h("span", { class: "mono", text: id }),
      h("span", { class: `badge replica-badge ${st}`, text: st }),
      lateSince ? h("span", { class: "badge warn not-renewing", "data-since": lateSince, text: notRenewing(lateSince) }) : null)));
  const timeline = [...((l && l.timeline) || [])].reverse();
  $("leader-timeline").replaceChildren(...timeline.map((change) =>
    h("li", null,
      h("time", { class: "muted", text: fmtTime(change.at), title: change.at || "" }),
      " ",
      h("span", { class: "mono", text: change.holder || "none" }),
      h("span", { class: "badge", text: `token ${change.token}` }),
      change.previous ? h("span", { class: "muted", text: ` from ${change.previous}` }) : null,
      leaderlessBadge(change))));
}

// Every replica the page knows of, the leader first: the holder, the replicas whose LeaseCandidate is
// renewed (standby), and those whose candidate has gone unrenewed (stale, e.g. killed); each as
// [identity, state, the renewTime it has not renewed since when it is late, else ""]. The holder is judged
// by the Lease it renews, the others by their candidates.
function replicaStates(l) {
  if (!l) return [];
  const states = new Map();
  const candidates = new Map((l.candidates || []).map((c) => [c.identity, c]));
  const late = (c) => (c && c.renewing === false ? c.renewTime || "" : "");
  if (l.holder) states.set(l.holder, ["leader", l.holderRenewing === false ? l.renewTime || "" : ""]);
  for (const id of l.replicas || []) if (!states.has(id)) states.set(id, ["standby", late(candidates.get(id))]);
  for (const c of candidates.values()) if (!states.has(c.identity)) states.set(c.identity, [c.live ? "standby" : "stale", late(c)]);
  return [...states].map(([id, [st, lateSince]]) => [id, st, lateSince]);
}

function notRenewing(since) {
  return `not renewing since ${fmtSpan(since) || "?"}`;
}

// Measured when the watch saw the lease released; otherwise bounded by the time since the previous
// holder's last renewal (a killed holder is not seen to go).
function leaderlessBadge(change) {
  const known = (value) => value !== null && value !== undefined;
  if (known(change.leaderlessSeconds)) {
    return h("span", { class: "badge warn", text: `${Number(change.leaderlessSeconds).toFixed(1)}s leaderless` });
  }
  if (known(change.sinceLastRenewalSeconds)) {
    return h("span", {
      class: "badge warn",
      text: `≤ ${Number(change.sinceLastRenewalSeconds).toFixed(1)}s leaderless`,
      title: "time since the previous holder's last renewal: it led for part of it",
    });
  }
  return null;
}

function renderRenewAge() {
  const l = state.leadership;
  setText("leader-renew", l && l.renewTime ? `${fmtTime(l.renewTime)} (${fmtAge(l.renewTime)})` : "–");
  for (const badge of document.querySelectorAll("#leader-replicas .not-renewing")) {
    badge.textContent = notRenewing(badge.dataset.since);
  }
}

function renderPdbs() {
  const rows = [...state.pdbs.values()].sort((a, b) => a.key.localeCompare(b.key)).map((pdb) => {
    const rule = pdb.minAvailable !== null && pdb.minAvailable !== undefined
      ? `minAvailable ${pdb.minAvailable}` : `maxUnavailable ${pdb.maxUnavailable}`;
    return h("li", { "data-pdb": pdb.key, class: pdb.disruptionsAllowed > 0 ? "" : "blocked" },
      h("span", { class: "row-title" }, h("span", { class: "mono", text: pdb.key }),
        h("span", { class: pdb.disruptionsAllowed > 0 ? "badge ok" : "badge warn", text: `${pdb.disruptionsAllowed} disruptions allowed` })),
      h("span", { class: "muted", text: `${rule} · healthy ${pdb.currentHealthy}/${pdb.expectedPods}, desired ${pdb.desiredHealthy}` }));
  });
  $("pdbs").replaceChildren(...rows);
  $("pdbs-empty").hidden = rows.length > 0;
}

function renderPodGroups() {
  const rows = [...state.podGroups.values()].sort((a, b) => a.key.localeCompare(b.key)).map((g) => {
    const p = pct(g.scheduled, g.minCount);
    return h("li", { "data-podgroup": g.key },
      h("span", { class: "row-title" }, h("span", { class: "mono", text: g.key }),
        h("span", { class: "badge", text: g.phase || "" })),
      h("span", { class: "bar wide", role: "progressbar", "aria-label": `${g.key} scheduled of minCount`, "aria-valuemin": "0", "aria-valuemax": String(g.minCount), "aria-valuenow": String(g.scheduled) },
        h("span", { class: `fill ${g.scheduled >= g.minCount ? "done" : ""}`, style: `width:${p.toFixed(1)}%` })),
      h("span", { class: "muted", text: `${g.scheduled}/${g.minCount} scheduled (minCount), ${g.running} running, ${g.members} members` }),
      // The condition's message tells of a success once the group is bound: drawn as one, not as a reason.
      g.message ? h("span", { class: g.scheduledCondition === "True" ? "message ok" : "reason", text: g.message }) : null);
  });
  $("podgroups").replaceChildren(...rows);
  $("podgroups-empty").hidden = rows.length > 0;
}

function eventRow(e) {
  return h("li", { class: e.type === "Warning" ? "event warning" : "event", "data-event": e.key },
    h("time", { class: "muted", text: fmtTime(e.time), title: e.time || "" }),
    h("span", { class: "event-reason", text: e.reason }),
    h("span", { class: "mono event-object", text: e.object }),
    h("span", { class: "event-message", text: e.message }),
    e.count > 1 ? h("span", { class: "badge", text: `×${e.count}` }) : null);
}

function renderEvents(added, reset) {
  const list = $("events");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
  if (reset || added >= MAX_EVENTS) {
    list.replaceChildren(...state.events.map(eventRow));
  } else {
    list.append(...state.events.slice(-added).map(eventRow));
    while (list.childElementCount > MAX_EVENTS) list.firstElementChild.remove();
  }
  // Follow the newest event unless the reader scrolled up to read older ones.
  if (atBottom || reset) list.scrollTop = list.scrollHeight;
}

function renderPreemptions() {
  const preemptions = state.events.filter((e) => PREEMPTION_REASONS.has(e.reason)).slice(-MAX_PREEMPTIONS).reverse();
  $("preemptions").replaceChildren(...preemptions.map((e) =>
    h("li", { "data-event": e.key },
      h("span", { class: "row-title" }, h("time", { class: "muted", text: fmtTime(e.time) }),
        h("span", { class: "badge warn", text: e.reason }), h("span", { class: "mono", text: e.object })),
      h("span", { class: "reason", text: e.message }))));
  $("preemptions-empty").hidden = preemptions.length > 0;
}

function renderLegend() {
  $("legend").replaceChildren(...PRIORITY_BANDS.map((band) =>
    h("li", null, h("span", { class: `dot ${band.cls}`, "aria-hidden": "true" }), band.label)));
}

// --- the tooltip and the pod details ----------------------------------------------------------------------

function podSummary(pod) {
  const requests = Object.entries(pod.requests || {}).map(([r, v]) => `${r} ${fmtQuantity(r, v)}`).join(", ");
  return [
    pod.key,
    `priority ${pod.priority ?? 0}${pod.priorityClassName ? ` (${pod.priorityClassName})` : ""}`,
    `${pod.phase || "no phase"}${pod.terminating ? ", terminating" : ""}${pod.node ? ` on ${pod.node}` : ""}`,
    requests ? `requests ${requests}` : "no requests",
    pod.podGroup ? `group ${pod.podGroup}` : "",
  ].filter(Boolean).join("\n");
}

function showTooltip(target) {
  const pod = state.pods.get(target.dataset.pod);
  const tip = $("tooltip");
  tip.textContent = pod ? podSummary(pod) : target.dataset.pod;
  tip.hidden = false;
  const rect = target.getBoundingClientRect();
  const x = Math.min(rect.left, window.innerWidth - tip.offsetWidth - 8);
  const below = rect.bottom + 6 + tip.offsetHeight < window.innerHeight;
  tip.style.left = `${Math.max(4, x)}px`;
  tip.style.top = `${below ? rect.bottom + 6 : rect.top - tip.offsetHeight - 6}px`;
}

const details = { key: "", stale: false, request: 0, returnFocus: null };

async function openDetails(key, trigger) {
  details.key = key;
  details.stale = false;
  if (trigger) details.returnFocus = trigger;
  const panel = $("pod-details");
  const wasHidden = panel.hidden;
  panel.hidden = false;
  setText("details-title", key);
  const request = ++details.request;
  const [ns, name] = key.split("/");
  let body;
  try {
    const response = await fetch(`/api/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`);
    const data = await response.json();
    body = response.ok ? detailsBody(data) : h("p", { class: "error", text: data.error || `HTTP ${response.status}` });
  } catch (err) {
    body = h("p", { class: "error", text: `could not load ${key}: ${err}` });
  }
  if (request !== details.request) return;   // a newer request won
  $("details-body").replaceChildren(body);
  if (wasHidden) $("details-close").focus();
}

function refreshDetails() {
  details.stale = false;
  if (details.key && !$("pod-details").hidden) openDetails(details.key, null);
}

function closeDetails() {
  $("pod-details").hidden = true;
  details.key = "";
  details.request += 1;
  if (details.returnFocus && details.returnFocus.isConnected) details.returnFocus.focus();
  details.returnFocus = null;
}

function kvList(obj) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return h("span", { class: "muted", text: "none" });
  return h("ul", { class: "tags" }, ...entries.map(([k, v]) => h("li", { class: "mono", text: v === "" ? k : `${k}=${v}` })));
}

function quantities(obj) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return "none";
  return entries.map(([r, v]) => `${r} ${fmtQuantity(r, v)}`).join(", ");
}

function detailsBody(data) {
  const pod = data.pod;
  const section = (title, ...content) => h("section", null, h("h3", { text: title }), ...content);
  const facts = h("dl", { class: "kv" },
    h("dt", { text: "Phase" }), h("dd", { text: `${pod.phase || "–"}${pod.terminating ? " (terminating)" : ""}` }),
    h("dt", { text: "Node" }), h("dd", { class: "mono", text: pod.node || "not bound" }),
    h("dt", { text: "Priority" }), h("dd", { text: `${pod.priority ?? 0}${pod.priorityClassName ? ` (${pod.priorityClassName})` : ""}` }),
    h("dt", { text: "Requests" }), h("dd", { text: quantities(pod.requests) }),
    pod.nominatedNode ? h("dt", { text: "Nominated" }) : null, pod.nominatedNode ? h("dd", { class: "mono", text: pod.nominatedNode }) : null,
    pod.podGroup ? h("dt", { text: "PodGroup" }) : null, pod.podGroup ? h("dd", { class: "mono", text: pod.podGroup }) : null,
    pod.reason ? h("dt", { text: "Reason" }) : null, pod.reason ? h("dd", { text: `${pod.reason}: ${pod.message}` }) : null);
  const containers = (data.containers || []).map((c) =>
    h("li", null, h("span", { class: "mono", text: `${c.name} (${c.image})` }),
      h("span", { class: "muted", text: ` requests ${quantities(c.requests)}; limits ${quantities(c.limits)}` })));
  const group = (data.groupAttempt || []).map((m) =>
    h("tr", null, h("td", { class: "mono", text: m.pod }), h("td", { text: m.placement })));
  return h("div", null,
    facts,
    section("Labels", kvList(data.labels)),
    section("Node selector", kvList(data.nodeSelector)),
    section("Tolerations", data.tolerations && data.tolerations.length
      ? h("ul", { class: "tags" }, ...data.tolerations.map((t) => h("li", { class: "mono", text: t })))
      : h("span", { class: "muted", text: "none" })),
    section("Containers", h("ul", { class: "plain" }, ...containers)),
    section("Scheduling explanation (last attempt)",
      h("pre", { id: "pod-explanation", class: "explanation", text: data.explanation || "(none recorded)" })),
    group.length ? section("Group attempt", h("table", { class: "group" },
      h("thead", null, h("tr", null, h("th", { text: "Pod" }), h("th", { text: "Placement" }))), h("tbody", null, ...group))) : null,
    section("Events", data.events && data.events.length
      ? h("ol", { class: "events small" }, ...data.events.map(eventRow))
      : h("span", { class: "muted", text: "none" })));
}

// ---------------------------------------------------------------------------------------------------------
// Wiring

function init() {
  renderLegend();
  const scroller = $("nodes");
  scroller.addEventListener("scroll", scheduleRender, { passive: true });
  new ResizeObserver(() => {
    lastRange = "";
    scheduleRender();
  }).observe(scroller);
  $("node-filter").addEventListener("input", (e) => {
    filterText = e.target.value.trim().toLowerCase();
    filterChanged = true;
    scroller.scrollTop = 0;
    scheduleRender();
  });
  document.addEventListener("click", (e) => {
    const chip = e.target.closest("[data-pod]");
    const row = e.target.closest("[data-open-pod]");
    if (chip) openDetails(chip.dataset.pod, chip);
    else if (row) openDetails(row.dataset.openPod, row);
  });
  document.addEventListener("mouseover", (e) => {
    const chip = e.target.closest("[data-pod]");
    if (chip) showTooltip(chip);
    else $("tooltip").hidden = true;
  });
  document.addEventListener("focusin", (e) => {
    const chip = e.target.closest && e.target.closest("[data-pod]");
    if (chip) showTooltip(chip);
    else $("tooltip").hidden = true;
  });
  $("details-close").addEventListener("click", closeDetails);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !$("pod-details").hidden) closeDetails();
  });
  setInterval(renderRenewAge, 1000);
  connect();
}

init();
