// mmsim HTML report: sortable tables and interactive SVG line plots. Inlined in the page;
// reads the plot data from <script id="mmsim-plots">. No external code, no network.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg"; // a namespace name, not a fetch
  var COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];
  var DASHES = ["", "7 4", "2 3", "9 3 2 3", "4 2", "12 4", "1 2", "6 2 2 2"];
  var W = 720, H = 360, M = { l: 80, r: 18, t: 12, b: 54 };

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  // Tick step of about n ticks over span: 1, 2 or 5 times a power of ten.
  function niceStep(span, n) {
    if (!(span > 0)) return 1;
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
  }

  // A tick label: SI suffix for large numbers, no more decimals than the step needs.
  function fmtTick(v, step) {
    var a = Math.abs(v);
    var units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][0] && step >= units[i][0] / 100) {
        var s = step / units[i][0], d = s >= 1 ? 0 : Math.min(3, Math.ceil(-Math.log10(s)));
        return (v / units[i][0]).toFixed(d) + units[i][1];
      }
    }
    var dec = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
    return v.toFixed(dec);
  }

  // A value in the tooltip: exact integers, else 4 significant digits.
  function fmtVal(v) {
    if (v === null || v === undefined || !isFinite(v)) return "-";
    if (Math.abs(v - Math.round(v)) < 1e-9 && Math.abs(v) < 1e15) return Math.round(v).toLocaleString("en-US");
    return Number(v.toPrecision(4)).toString();
  }

  // The index of the last point with x <= x0 (0 if none), xs sorted.
  function lastAtOrBefore(d, x0) {
    var lo = 0, hi = d.length / 2 - 1;
    if (hi < 0) return -1;
    if (d[0] > x0) return 0;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (d[2 * mid] <= x0) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  var plotSeq = 0;

  function Plot(fig, spec) {
    this.fig = fig; this.spec = spec; this.id = "p" + (plotSeq++);
    this.hidden = spec.l.map(function () { return false; });
    var xmin = Infinity, xmax = -Infinity;
    spec.l.forEach(function (l) {
      for (var i = 0; i < l.d.length; i += 2) { xmin = Math.min(xmin, l.d[i]); xmax = Math.max(xmax, l.d[i]); }
    });
    if (!isFinite(xmin)) { xmin = 0; xmax = 1; }
    if (xmax === xmin) { xmax = xmin + 1; }
    this.full = [xmin, xmax];
    this.view = [xmin, xmax];
    this.build();
  }

  Plot.prototype.build = function () {
    var self = this, fig = this.fig;
    this.svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": this.spec.t });
    fig.appendChild(this.svg);
    var defs = el("defs", {}, this.svg);
    var cp = el("clipPath", { id: this.id + "-clip" }, defs);
    el("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b }, cp);
    this.gAxes = el("g", {}, this.svg);
    this.gLines = el("g", { "clip-path": "url(#" + this.id + "-clip)" }, this.svg);
    this.gHover = el("g", { "pointer-events": "none" }, this.svg);
    this.overlay = el("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b,
      fill: "transparent", "class": "overlay", style: "cursor: crosshair" }, this.svg);
    this.tip = document.createElement("div");
    this.tip.className = "tip";
    fig.appendChild(this.tip);
    var legend = document.createElement("div");
    legend.className = "legend";
    this.buttons = this.spec.l.map(function (l, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "toggle";
      b.setAttribute("aria-pressed", "true");
      b.title = "hide or show " + l.n;
      var sw = document.createElement("span");
      sw.className = "sw c" + (i % 8);
      b.appendChild(sw);
      b.appendChild(document.createTextNode(l.n + (l.d.length ? "" : " (no data)")));
      b.addEventListener("click", function () { self.toggle(i); });
      legend.appendChild(b);
      return b;
    });
    this.reset = document.createElement("button");
    this.reset.type = "button";
    this.reset.className = "reset";
    this.reset.textContent = "reset zoom";
    this.reset.style.display = "none";
    this.reset.addEventListener("click", function () { self.zoom(self.full[0], self.full[1]); });
    legend.appendChild(this.reset);
    fig.appendChild(legend);
    this.bindMouse();
    this.draw();
  };

  Plot.prototype.toggle = function (i) {
    this.hidden[i] = !this.hidden[i];
    this.buttons[i].classList.toggle("off", this.hidden[i]);
    this.buttons[i].setAttribute("aria-pressed", String(!this.hidden[i]));
    this.draw();
  };

  Plot.prototype.zoom = function (a, b) {
    this.view = [Math.min(a, b), Math.max(a, b)];
    var zoomed = this.view[0] > this.full[0] || this.view[1] < this.full[1];
    this.reset.style.display = zoomed ? "" : "none";
    this.draw();
  };

  Plot.prototype.sx = function (x) {
    return M.l + (x - this.view[0]) / (this.view[1] - this.view[0]) * (W - M.l - M.r);
  };
  Plot.prototype.sy = function (y) {
    return H - M.b - (y - this.yr[0]) / (this.yr[1] - this.yr[0]) * (H - M.t - M.b);
  };
  Plot.prototype.ix = function (px) {
    return this.view[0] + (px - M.l) / (W - M.l - M.r) * (this.view[1] - this.view[0]);
  };

  Plot.prototype.draw = function () {
    var self = this, spec = this.spec, v = this.view;
    // y range over the visible lines within the x view (including the step before it).
    var ymin = Infinity, ymax = -Infinity;
    spec.l.forEach(function (l, li) {
      if (self.hidden[li]) return;
      var start = Math.max(0, lastAtOrBefore(l.d, v[0]));
      for (var i = 2 * start; i < l.d.length; i += 2) {
        if (l.d[i] > v[1] && i > 2 * start) { ymin = Math.min(ymin, l.d[i + 1]); ymax = Math.max(ymax, l.d[i + 1]); break; }
        ymin = Math.min(ymin, l.d[i + 1]); ymax = Math.max(ymax, l.d[i + 1]);
      }
    });
    if (!isFinite(ymin)) { ymin = 0; ymax = 1; }
    if (spec.cdf) { ymin = 0; ymax = 1; }
    if (ymin > 0 && !spec.cdf && ymin < ymax * 0.5) ymin = 0;
    if (ymax === ymin) { ymax = ymin + (Math.abs(ymin) || 1); if (ymin > 0) ymin = 0; }
    var ystep = niceStep(ymax - ymin, 6);
    ymin = Math.floor(ymin / ystep + 1e-9) * ystep;
    ymax = Math.ceil(ymax / ystep - 1e-9) * ystep;
    this.yr = [ymin, ymax];
    var g = this.gAxes;
    while (g.firstChild) g.removeChild(g.firstChild);
    var x0 = M.l, x1 = W - M.r, y0 = H - M.b, y1 = M.t;
    for (var y = ymin; y <= ymax + ystep * 1e-6; y += ystep) {
      var py = this.sy(y);
      el("line", { x1: x0, x2: x1, y1: py, y2: py, "class": "grid-line" }, g);
      var t = el("text", { x: x0 - 6, y: py + 4, "text-anchor": "end" }, g);
      t.textContent = fmtTick(y, ystep);
    }
    var xstep = niceStep(v[1] - v[0], 7);
    for (var x = Math.ceil(v[0] / xstep - 1e-9) * xstep; x <= v[1] + xstep * 1e-6; x += xstep) {
      var px = this.sx(x);
      el("line", { x1: px, x2: px, y1: y0, y2: y1, "class": "grid-line" }, g);
      var tx = el("text", { x: px, y: y0 + 17, "text-anchor": "middle" }, g);
      tx.textContent = fmtTick(x, xstep);
    }
    el("line", { x1: x0, x2: x1, y1: y0, y2: y0, "class": "axis-line" }, g);
    el("line", { x1: x0, x2: x0, y1: y0, y2: y1, "class": "axis-line" }, g);
    var xt = el("text", { x: (x0 + x1) / 2, y: H - 12, "text-anchor": "middle", "class": "axis-title" }, g);
    xt.textContent = spec.x;
    var yt = el("text", { x: 0, y: 0, "text-anchor": "middle", "class": "axis-title",
      transform: "translate(16," + ((y0 + y1) / 2) + ") rotate(-90)" }, g);
    yt.textContent = spec.y;
    // Lines.
    var gl = this.gLines;
    while (gl.firstChild) gl.removeChild(gl.firstChild);
    spec.l.forEach(function (l, li) {
      var d = [];
      for (var i = 0; i < l.d.length; i += 2) {
        d.push((i ? "L" : "M") + self.sx(l.d[i]).toFixed(1) + "," + self.sy(l.d[i + 1]).toFixed(1));
      }
      var attrs = { d: d.join(""), "class": "line", stroke: COLORS[li % 8], "data-run": li };
      if (DASHES[li % 8]) attrs["stroke-dasharray"] = DASHES[li % 8];
      var p = el("path", attrs, gl);
      if (self.hidden[li]) p.style.display = "none";
      var title = el("title", {}, p);
      title.textContent = l.n;
    });
  };

  Plot.prototype.hover = function (px, py) {
    var self = this, g = this.gHover, spec = this.spec;
    while (g.firstChild) g.removeChild(g.firstChild);
    var x = this.ix(px);
    el("line", { x1: px, x2: px, y1: M.t, y2: H - M.b, "class": "cross" }, g);
    var rows = [];
    spec.l.forEach(function (l, li) {
      if (self.hidden[li] || !l.d.length) return;
      var i = lastAtOrBefore(l.d, x);
      // Time series: the nearest sample; a CDF: the step at or before x.
      if (!spec.cdf && 2 * i + 2 < l.d.length && Math.abs(l.d[2 * i + 2] - x) < Math.abs(l.d[2 * i] - x)) i++;
      if (spec.cdf && 2 * i + 3 < l.d.length && l.d[2 * i + 2] === l.d[2 * i]) i++;
      var xv = l.d[2 * i], yv = l.d[2 * i + 1];
      if (xv < self.view[0] || xv > self.view[1]) return;
      el("circle", { cx: self.sx(xv), cy: self.sy(yv), r: 4, fill: COLORS[li % 8], stroke: "#fff", "stroke-width": 1.5 }, g);
      rows.push([li, l.n, xv, yv]);
    });
    if (!rows.length) { this.tip.style.display = "none"; return; }
    var tip = this.tip;
    while (tip.firstChild) tip.removeChild(tip.firstChild);
    var head = document.createElement("div");
    head.className = "tx";
    head.textContent = spec.x + ": " + fmtVal(rows[0][2]);
    tip.appendChild(head);
    rows.forEach(function (r) {
      var div = document.createElement("div");
      var sw = document.createElement("span");
      sw.className = "sw c" + (r[0] % 8);
      div.appendChild(sw);
      var same = rows.every(function (o) { return o[2] === rows[0][2]; });
      div.appendChild(document.createTextNode(r[1] + ": " + fmtVal(r[3]) + (same ? "" : " (at " + fmtVal(r[2]) + ")")));
      tip.appendChild(div);
    });
    var rect = this.svg.getBoundingClientRect(), figRect = this.fig.getBoundingClientRect();
    var scale = rect.width / W;
    tip.style.display = "block";
    var left = rect.left - figRect.left + px * scale + 14;
    if (left + tip.offsetWidth > figRect.width) left = rect.left - figRect.left + px * scale - tip.offsetWidth - 14;
    tip.style.left = Math.max(0, left) + "px";
    tip.style.top = (rect.top - figRect.top + py * scale + 10) + "px";
  };

  Plot.prototype.unhover = function () {
    var g = this.gHover;
    while (g.firstChild) g.removeChild(g.firstChild);
    this.tip.style.display = "none";
  };

  Plot.prototype.bindMouse = function () {
    var self = this, ov = this.overlay, drag = null, sel = null;
    function local(ev) {
      var r = self.svg.getBoundingClientRect();
      return [(ev.clientX - r.left) * W / r.width, (ev.clientY - r.top) * H / r.height];
    }
    ov.addEventListener("mousemove", function (ev) {
      var p = local(ev);
      if (drag !== null) {
        var a = Math.max(M.l, Math.min(drag, p[0])), b = Math.min(W - M.r, Math.max(drag, p[0]));
        if (!sel) sel = el("rect", { y: M.t, height: H - M.t - M.b, "class": "sel", "pointer-events": "none" }, self.svg);
        sel.setAttribute("x", a); sel.setAttribute("width", b - a);
      }
      self.hover(p[0], p[1]);
    });
    ov.addEventListener("mouseleave", function () { self.unhover(); });
    ov.addEventListener("mousedown", function (ev) { ev.preventDefault(); drag = local(ev)[0]; });
    window.addEventListener("mouseup", function (ev) {
      if (drag === null) return;
      var p = local(ev)[0], a = drag;
      drag = null;
      if (sel) { sel.parentNode.removeChild(sel); sel = null; }
      if (Math.abs(p - a) > 6) self.zoom(self.ix(Math.max(M.l, Math.min(a, p))), self.ix(Math.min(W - M.r, Math.max(a, p))));
    });
    ov.addEventListener("dblclick", function () { self.zoom(self.full[0], self.full[1]); });
  };

  // Sortable tables: a click on a header sorts by that column (numbers by data-v).
  function sortable(table) {
    var ths = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(ths, function (th, col) {
      if (!th.hasAttribute("data-sort")) return;
      th.addEventListener("click", function () {
        var num = th.getAttribute("data-sort") === "num";
        var asc = !th.classList.contains("sorted-asc");
        Array.prototype.forEach.call(ths, function (o) { o.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.forEach(function (r, i) { if (!r.hasAttribute("data-i")) r.setAttribute("data-i", i); });
        function key(r) {
          var c = r.cells[col];
          if (!c) return null;
          if (num) { var v = c.getAttribute("data-v"); return v === null || v === "" ? null : parseFloat(v); }
          return c.textContent.trim().toLowerCase();
        }
        rows.sort(function (a, b) {
          var ka = key(a), kb = key(b);
          if (ka === null && kb === null) return a.getAttribute("data-i") - b.getAttribute("data-i");
          if (ka === null) return 1;
          if (kb === null) return -1;
          var c = ka < kb ? -1 : ka > kb ? 1 : a.getAttribute("data-i") - b.getAttribute("data-i");
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  function init() {
    var data = [];
    var node = document.getElementById("mmsim-plots");
    if (node) data = JSON.parse(node.textContent);
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
    var figs = document.querySelectorAll("figure.plot[data-plot]");
    var drawn = 0;
    function render(fig) {
      if (fig.getAttribute("data-drawn")) return;
      fig.setAttribute("data-drawn", "1");
      new Plot(fig, data[+fig.getAttribute("data-plot")]);
      drawn++;
    }
    // Plots inside a closed <details> are drawn when it opens.
    Array.prototype.forEach.call(figs, function (fig) {
      var closed = fig.closest("details:not([open])");
      if (!closed) render(fig);
    });
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.addEventListener("toggle", function () {
        if (!d.open) return;
        Array.prototype.forEach.call(d.querySelectorAll("figure.plot[data-plot]"), function (fig) {
          if (!fig.closest("details:not([open])")) render(fig);
        });
      });
    });
    window.mmsimReport = {
      plots: data.length,
      drawn: function () { return drawn; },
      renderedAt: performance.now(),
      // Draws every plot not drawn yet (those in closed <details> too); returns the ms taken.
      renderAll: function () {
        var t = performance.now();
        Array.prototype.forEach.call(figs, render);
        return performance.now() - t;
      }
    };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
