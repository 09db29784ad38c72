// The brain as a graph: its pages and evidence as nodes, their links as edges, drawn by sigma.js
// (WebGL, made for thousands of nodes) over a graphology graph, laid out by folder and then by
// ForceAtlas2 in a worker — all vendored under vendor/ (see vendor/README.md), loaded the first
// time the view opens.
// Pan and zoom with the mouse, a finger or the buttons; filter by type and folder; a click (or
// Enter on the list beside it) opens the page. The list view shows the same pages as text.

import { api, path } from "./api.js";
import { $, clear, el, plural } from "./dom.js";

const VENDOR = ["/static/vendor/graphology.umd.min.js", "/static/vendor/graphology-library.min.js", "/static/vendor/sigma.min.js"];
// One colour per type, distinct from each other on the light and the dark background.
const TYPE_COLORS = {
  person: "#2f5bd3",
  company: "#b45309",
  project: "#15803d",
  meeting: "#7c3aed",
  concept: "#0e7490",
  source: "#be185d",
  analysis: "#4d7c0f",
  note: "#9333ea",
  evidence: "#6b7280",
};
const OTHER_COLOR = "#475569";

const box = $("#graph-canvas");
const summary = $("#graph-canvas-summary");
const empty = $("#graph-canvas-empty");
const SMALL = 200; // pages up to which every title is drawn
let loading = null; // the vendored scripts, once
let renderer = null;
let graph = null;
let filters = { type: "", folder: "" };
let layoutRun = 0; // bumps when a new graph replaces the one being laid out
let drawnFor = null; // the brain drawn (or being drawn) now

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = el("script", { src });
    script.addEventListener("load", resolve);
    script.addEventListener("error", () => reject(new Error(`The graph drawing could not be loaded (${src}).`)));
    document.head.append(script);
  });
}

function libraries() {
  // In order: the layout library and sigma expect graphology to be there.
  loading ||= VENDOR.reduce((done, src) => done.then(() => loadScript(src)), Promise.resolve());
  return loading;
}

const typeOf = (doc) => (doc.kind === "evidence" ? "evidence" : doc.type);

// Build the graph of `documents` (merged tombstones left out) and `edges`, laid out by folder
// first so pages of one folder start together, then by their links.
function build(documents, edges) {
  const Graph = window.graphology;
  const made = new Graph({ type: "directed", multi: false, allowSelfLoops: false });
  for (const doc of documents) {
    made.addNode(doc.id, {
      label: doc.title,
      type: "circle",
      docType: typeOf(doc),
      folder: doc.folder,
      color: TYPE_COLORS[typeOf(doc)] || OTHER_COLOR,
      x: 0,
      y: 0,
      size: 3,
    });
  }
  for (const edge of edges) {
    if (edge.source === edge.target || !made.hasNode(edge.source) || !made.hasNode(edge.target)) continue;
    if (made.hasEdge(edge.source, edge.target)) continue; // two kinds of link, one line
    made.addEdge(edge.source, edge.target, { size: 1, color: "#94a3b8", relation: edge.type });
  }
  made.forEachNode((node) => made.setNodeAttribute(node, "size", 3 + Math.min(12, Math.sqrt(made.degree(node)) * 2)));
  window.graphologyLibrary.layout.circlepack.assign(made, { hierarchyAttributes: ["folder"] });
  return made;
}

// ForceAtlas2 runs in a worker (vendor/forceatlas2-worker.js, one iteration per message), so
// the page stays responsive while a graph of thousands of pages settles. The drawing follows
// the positions every so often: a redraw of thousands of nodes (in software WebGL, hundreds of
// milliseconds) costs more than an iteration, and the worker waits for the page between two.
const drawEvery = (order) => (order > 1000 ? 2000 : 250);
const PPN = 10; // the worker's node matrix: x, y, dx, dy, old dx, old dy, mass, convergence, size, fixed
const FA2_DEFAULTS = {
  linLogMode: false,
  outboundAttractionDistribution: false,
  adjustSizes: false,
  edgeWeightInfluence: 1,
  scalingRatio: 1,
  strongGravityMode: false,
  gravity: 1,
  slowDown: 1,
  barnesHutOptimize: false,
  barnesHutTheta: 0.5,
};
let layoutWorker = null;

function matrices(made) {
  const offsets = new Map();
  const nodes = new Float32Array(made.order * PPN);
  let at = 0;
  made.forEachNode((node, attributes) => {
    offsets.set(node, at);
    nodes.set([attributes.x, attributes.y, 0, 0, 0, 0, 1, 1, attributes.size || 1, 0], at);
    at += PPN;
  });
  const edges = new Float32Array(made.size * 3);
  at = 0;
  made.forEachEdge((edge, attributes, source, target) => {
    const from = offsets.get(source);
    const to = offsets.get(target);
    nodes[from + 6] += 1; // mass: 1 + degree
    nodes[to + 6] += 1;
    edges.set([from, to, 1], at);
    at += 3;
  });
  return { nodes, edges };
}

function settle(made, run) {
  const inferred = window.graphologyLibrary.layoutForceAtlas2.inferSettings(made);
  const settings = { ...FA2_DEFAULTS, ...inferred, barnesHutOptimize: made.order > 300, slowDown: 2 };
  const total = made.order > 2000 ? 100 : made.order > 500 ? 150 : 250;
  const { nodes, edges } = matrices(made);
  let done = 0;
  let drawn = performance.now();
  layoutWorker = new Worker("/static/vendor/forceatlas2-worker.js");
  const worker = layoutWorker;
  worker.addEventListener("message", (event) => {
    if (run !== layoutRun || !renderer) return;
    const matrix = new Float32Array(event.data.nodes);
    done += 1;
    const finished = done >= total;
    if (finished || performance.now() - drawn > drawEvery(made.order)) {
      let at = 0;
      made.updateEachNodeAttributes(
        (node, attributes) => {
          attributes.x = matrix[at];
          attributes.y = matrix[at + 1];
          at += PPN;
          return attributes;
        },
        { attributes: ["x", "y"] },
      );
      renderer.refresh();
      drawn = performance.now();
    }
    if (finished) {
      worker.terminate();
      if (layoutWorker === worker) layoutWorker = null;
      box.dataset.settled = "true";
      return;
    }
    worker.postMessage({ settings, nodes: matrix.buffer }, [matrix.buffer]);
  });
  worker.postMessage({ settings, nodes: nodes.buffer, edges: edges.buffer }, [nodes.buffer, edges.buffer]);
}

function visible(node, data) {
  if (filters.type && data.docType !== filters.type) return false;
  if (filters.folder && data.folder !== filters.folder && !data.folder.startsWith(`${filters.folder}/`)) return false;
  return true;
}

function fillFilters(documents) {
  const types = [...new Set(documents.map(typeOf))].sort();
  const folders = [...new Set(documents.map((d) => d.folder))].sort();
  const typeSelect = clear($("#graph-type-filter"));
  typeSelect.append(el("option", { value: "", text: "All types" }), ...types.map((t) => el("option", { value: t, text: t })));
  const folderSelect = clear($("#graph-folder-filter"));
  folderSelect.append(
    el("option", { value: "", text: "All folders" }),
    ...folders.map((f) => el("option", { value: f, text: `${f}/` })),
  );
  typeSelect.value = types.includes(filters.type) ? filters.type : "";
  folderSelect.value = folders.includes(filters.folder) ? filters.folder : "";
  filters = { type: typeSelect.value, folder: folderSelect.value };
}

function describe() {
  let nodes = 0;
  graph.forEachNode((node, data) => {
    if (visible(node, data)) nodes++;
  });
  let links = 0;
  graph.forEachEdge((edge, data, source, target, sa, ta) => {
    if (visible(source, sa) && visible(target, ta)) links++;
  });
  const text = `${plural(nodes, "page")} and ${plural(links, "link")} drawn.`;
  summary.textContent = text;
  box.setAttribute("aria-label", `Graph of the brain: ${text} The list view shows the same pages as text.`);
  box.dataset.nodes = String(nodes);
  box.dataset.links = String(links);
}

export function stopGraphView() {
  layoutRun++;
  if (layoutWorker) layoutWorker.terminate();
  layoutWorker = null;
  if (renderer) renderer.kill();
  renderer = null;
  graph = null;
  drawnFor = null;
}

export const isDrawn = (brainName) => drawnFor === brainName;

// Draw `documents` (the Brain view's list, merged tombstones left out) of `brain`.
export async function showGraphView(brain, documents) {
  stopGraphView();
  drawnFor = brain.name;
  const run = layoutRun;
  box.dataset.settled = "false";
  summary.textContent = "Drawing the graph…";
  const [edges] = await Promise.all([api.get(`/brains/${path(brain.name)}/graph/edges`), libraries()]);
  if (run !== layoutRun) return;
  const live = documents.filter((d) => d.status !== "merged");
  fillFilters(live);
  empty.hidden = live.length > 0;
  box.hidden = !live.length; // no blank canvas: what to do instead
  if (!live.length) {
    summary.textContent = "No pages yet.";
    box.dataset.nodes = "0";
    box.dataset.links = "0";
    box.dataset.settled = "true";
    return;
  }
  graph = build(live, edges);
  const large = graph.order > 1000;
  const small = graph.order <= SMALL;
  renderer = new window.Sigma(graph, box, {
    renderEdgeLabels: false,
    // Every page's title on a small graph (a reader finds a page by its name, not its dot);
    // a large graph: fewer labels, and edges and labels left out while it is moved.
    labelRenderedSizeThreshold: small ? 0 : large ? 10 : 7,
    labelGridCellSize: small ? 40 : 100,
    labelDensity: small ? 4 : 1,
    hideEdgesOnMove: large,
    hideLabelsOnMove: large,
    defaultEdgeType: "arrow",
    labelColor: { color: getComputedStyle(document.documentElement).getPropertyValue("--text").trim() || "#1d2330" },
    nodeReducer: (node, data) => (visible(node, data) ? data : { ...data, hidden: true }),
    edgeReducer: (edge, data) => {
      const [source, target] = graph.extremities(edge);
      const shown = visible(source, graph.getNodeAttributes(source)) && visible(target, graph.getNodeAttributes(target));
      return shown ? data : { ...data, hidden: true };
    },
  });
  renderer.on("clickNode", ({ node }) => {
    location.hash = `#brain/${encodeURIComponent(node)}`;
  });
  renderer.on("enterNode", () => box.classList.add("over-node"));
  renderer.on("leaveNode", () => box.classList.remove("over-node"));
  describe();
  settle(graph, run);
}

// The on-screen position of a page's node (for tests and the keyboard's "centre on"); null
// when it is not drawn.
export function nodeOnScreen(id) {
  if (!renderer || !graph || !graph.hasNode(id)) return null;
  const data = renderer.getNodeDisplayData(id);
  return data ? renderer.framedGraphToViewport(data) : null;
}
window.lociGraphNode = nodeOnScreen;
// The pages whose titles are drawn now (for tests).
window.lociGraphLabels = () => (renderer ? [...renderer.displayedNodeLabels] : []);

function zoom(by) {
  if (!renderer) return;
  const camera = renderer.getCamera();
  if (by === 0) camera.animatedReset({ duration: 200 });
  else camera.animate({ ratio: camera.ratio / by }, { duration: 200 });
}

$("#graph-zoom-in").addEventListener("click", () => zoom(1.5));
$("#graph-zoom-out").addEventListener("click", () => zoom(1 / 1.5));
$("#graph-zoom-reset").addEventListener("click", () => zoom(0));
for (const [id, key] of [
  ["#graph-type-filter", "type"],
  ["#graph-folder-filter", "folder"],
]) {
  $(id).addEventListener("change", (event) => {
    filters = { ...filters, [key]: event.target.value };
    if (!renderer) return;
    renderer.refresh();
    describe();
  });
}
