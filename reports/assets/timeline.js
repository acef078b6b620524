/*
 * timeline.js: the interactive timeline of report.html (docs/reports.md
 * "The timeline"). Embedded in the page at build time; reads the JSON the
 * renderer wrote (#tl-data: holds, faults, violations, incidents from the
 * result model) and draws it on a canvas, one row per worker and per node a
 * fault hit. Wheel zooms, drag pans, double-click resets; hovering a hold
 * shows it; clicking a violation, an incident or a story line zooms to it.
 * Level of detail: a row with more holds in view than pixels is drawn as
 * per-pixel occupancy; each hold is drawn once there are fewer.
 */
(function () {
  'use strict';
  var box = document.getElementById('tl');
  var src = document.getElementById('tl-data');
  if (!box || !src) return;
  var D = JSON.parse(src.textContent);
  var H = D.holds, N = H.w.length;
  var canvas = box.querySelector('canvas'), tip = box.querySelector('.tl-tip');
  var ctx = canvas.getContext('2d');
  var ROW = 18, TOP = 26, LEFT = 64, SHADES = [];
  for (var lv = 0; lv <= 8; lv++) SHADES.push('rgba(43,108,176,' + (0.12 + lv * 0.11).toFixed(2) + ')');

  /* rows: every worker, then every node a fault hit */
  var rows = [], rowOf = {};
  function addRow(key, label, kind, id) {
    if (rowOf[key] !== undefined) return;
    rowOf[key] = rows.length;
    rows.push({ key: key, label: label, kind: kind, id: id, from: 0, to: 0, maxDur: 0 });
  }
  var ws = {}, i;
  (D.workers || []).forEach(function (w) { ws[w] = 1; });
  for (i = 0; i < N; i++) ws[H.w[i]] = 1;
  D.faults.forEach(function (f) { if (f.worker !== null) ws[f.worker] = 1; });
  D.violations.forEach(function (v) { v.h.forEach(function (hd) { ws[hd.w] = 1; }); });
  Object.keys(ws).map(Number).sort(function (a, b) { return a - b; })
    .forEach(function (w) { addRow('w' + w, 'w' + w, 'w', w); });
  D.faults.forEach(function (f) {
    if (f.node !== null && f.worker === null) addRow('n' + f.node, 'node_' + f.node, 'n', f.node);
  });
  /* the holds come sorted by worker, then enter: each worker row is a range */
  for (i = 0; i < N; i++) {
    var r = rows[rowOf['w' + H.w[i]]];
    if (r.to === 0) r.from = i;
    r.to = i + 1;
    r.maxDur = Math.max(r.maxDur, H.x[i] - H.e[i]);
  }
  box.setAttribute('data-rows', rows.map(function (r) { return r.label; }).join(' '));
  var selected = {};  /* hold index -> 1 for the holds of the selected violation or incident */
  var selT = null;    /* a story line's instant */
  var last = 0;
  for (i = 0; i < N; i++) last = Math.max(last, H.x[i]);
  var full = [0, Math.max(D.end_s * 1000, last, 1)];
  var view = full.slice();

  function width() { return box.clientWidth || 800; }
  function xOf(t) { return LEFT + (t - view[0]) / (view[1] - view[0]) * (width() - LEFT - 8); }
  function tOf(x) { return view[0] + (x - LEFT) / (width() - LEFT - 8) * (view[1] - view[0]); }
  function fmt(ms) { return ms === null || ms < 0 ? '-' : (ms / 1000).toFixed(3) + 's'; }

  function setView(a, b, why) {
    var span = Math.max(b - a, 0.05);
    if (span > full[1] - full[0]) { a = full[0]; span = full[1] - full[0]; }
    a = Math.max(full[0], Math.min(a, full[1] - span));
    view = [a, a + span];
    box.setAttribute('data-view-from', view[0].toFixed(3));
    box.setAttribute('data-view-to', view[1].toFixed(3));
    if (why) box.setAttribute('data-view-why', why);
    draw();
  }

  /* first hold of row r whose enter is >= t - r.maxDur (it may still be open at t) */
  function firstFrom(r, t) {
    var lo = r.from, hi = r.to, k = t - r.maxDur;
    while (lo < hi) { var m = (lo + hi) >> 1; if (H.e[m] < k) lo = m + 1; else hi = m; }
    return lo;
  }

  function draw() {
    var t0 = performance.now(), w = width(), h = TOP + rows.length * ROW + 8, dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
      canvas.style.width = w + 'px'; canvas.style.height = h + 'px';
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.font = '11px system-ui, sans-serif';
    axis(w, h);
    var lod = 0;
    rows.forEach(function (r, ri) {
      var y = TOP + ri * ROW;
      ctx.fillStyle = ri % 2 ? '#fafbfc' : '#fff';
      ctx.fillRect(LEFT, y, w - LEFT, ROW);
      ctx.fillStyle = '#333';
      ctx.fillText(r.label, 6, y + 13);
      if (r.kind === 'w') lod += holds(r, y, w);
    });
    rows.forEach(function (r, ri) { faults(r, TOP + ri * ROW, w); });
    violationsMarks();
    if (selT !== null) {
      ctx.strokeStyle = '#6a1b9a'; ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.moveTo(xOf(selT), TOP - 4); ctx.lineTo(xOf(selT), h); ctx.stroke();
    }
    box.setAttribute('data-lod', lod ? 'occupancy' : 'holds');
    box.setAttribute('data-draw-ms', (performance.now() - t0).toFixed(1));
  }

  function axis(w, h) {
    var span = view[1] - view[0], step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    ctx.strokeStyle = '#e3e5e8'; ctx.fillStyle = '#555'; ctx.lineWidth = 1;
    for (var t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      var x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, TOP - 6); ctx.lineTo(x, h); ctx.stroke();
      ctx.fillText(step >= 1000 ? (t / 1000).toFixed(0) + 's' : step >= 1 ? (t / 1000).toFixed(3) + 's'
                   : (t / 1000).toFixed(6) + 's', x + 2, 12);
    }
  }

  /* fault windows: on the row of the worker or node they hit; a fault on
   * every worker (or none resolved) shades every worker row, hatched */
  function faults(r, y, w) {
    D.faults.forEach(function (f) {
      if (f.skipped || f.e < view[0] || f.s > view[1]) return;
      var mine = r.kind === 'w' ? (f.worker === r.id || (f.worker === null && f.node === null))
                                : (f.worker === null && f.node === r.id);
      if (!mine) return;
      var x0 = Math.max(LEFT, xOf(f.s)), x1 = Math.min(w, xOf(f.e)), all = f.worker === null && f.node === null;
      ctx.fillStyle = all ? 'rgba(240,200,0,.16)' : 'rgba(240,190,0,.30)';
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), ROW);
      ctx.fillStyle = all ? 'rgba(215,170,0,.55)' : '#d9a400'; /* a strip the holds never cover */
      ctx.fillRect(x0, y + ROW - 3, Math.max(1, x1 - x0), 3);
      if (!all || r === rows[0]) {
        var label = f.name + (all ? ' (every worker)' : ''), tw = ctx.measureText(label).width + 6;
        if (x1 - x0 > tw) {
          ctx.fillStyle = 'rgba(255,248,220,.92)'; ctx.fillRect(x0 + 2, y + 2, tw, 12);
          ctx.fillStyle = '#6b5400'; ctx.fillText(label, x0 + 5, y + 12);
        }
      }
    });
  }

  /* the holds of worker row r; returns 1 when drawn as occupancy */
  function holds(r, y, w) {
    var i = firstFrom(r, view[0]), px = w - LEFT - 8, end = r.from;
    var lo = r.from, hi = r.to;
    while (lo < hi) { var m = (lo + hi) >> 1; if (H.e[m] <= view[1]) lo = m + 1; else hi = m; }
    end = lo;
    if (end - i > px) { /* level of detail: occupancy per pixel column */
      var occ = new Float32Array(Math.ceil(px) + 1), per = (view[1] - view[0]) / px;
      for (var k = i; k < end; k++) {
        var a = Math.max(H.e[k], view[0]), b = Math.min(H.x[k], view[1]);
        if (b < a) continue;
        var c0 = (a - view[0]) / per, c1 = (b - view[0]) / per;
        for (var c = Math.floor(c0); c <= Math.floor(c1) && c < occ.length; c++)
          occ[c] += (Math.min(c + 1, c1) - Math.max(c, c0));
      }
      for (var lv = 1; lv <= 8; lv++) { /* 8 shades, one fill style each */
        ctx.fillStyle = SHADES[lv];
        for (c = 0; c < occ.length; c++)
          if (occ[c] && Math.min(8, Math.ceil(occ[c] * 8)) === lv) ctx.fillRect(LEFT + c, y + 3, 1, ROW - 6);
      }
      for (k = i; k < end; k++) if (selected[k]) bar(k, y, w);
      return 1;
    }
    for (k = i; k < end; k++) if (H.x[k] >= view[0]) bar(k, y, w);
    return 0;
  }

  function bar(k, y, w) {
    var x0 = Math.max(LEFT, xOf(H.e[k])), x1 = Math.min(w, xOf(H.x[k])), lx = H.l[k] === null ? x1
             : Math.max(x0, Math.min(x1, xOf(H.l[k])));
    var dim = hasSel && !selected[k];
    ctx.globalAlpha = dim ? 0.35 : 1;
    ctx.fillStyle = '#2b6cb0';
    ctx.fillRect(x0, y + 3, Math.max(1, lx - x0), ROW - 6);
    if (x1 > lx) { ctx.fillStyle = '#e07b00'; ctx.fillRect(lx, y + 3, x1 - lx, ROW - 6); }
    if (selected[k]) {
      ctx.strokeStyle = '#b3261e'; ctx.lineWidth = 2;
      ctx.strokeRect(x0 - 1, y + 2, Math.max(2, x1 - x0) + 2, ROW - 4);
    }
    if (D.ends[H.end[k]] === 'crash') { /* killed in its hold */
      ctx.strokeStyle = '#000'; ctx.lineWidth = 1.5; ctx.beginPath();
      ctx.moveTo(x1 - 4, y + 4); ctx.lineTo(x1 + 4, y + ROW - 4);
      ctx.moveTo(x1 + 4, y + 4); ctx.lineTo(x1 - 4, y + ROW - 4); ctx.stroke();
    }
    ctx.globalAlpha = 1;
  }

  function violationsMarks() {
    D.violations.forEach(function (v) {
      if (v.s > view[1] || v.s + v.d < view[0]) return;
      var x0 = xOf(v.s), x1 = Math.max(x0 + 2, xOf(v.s + v.d));
      ctx.fillStyle = v.cls === 'lock-broken' ? '#7b1fa2' : '#b3261e';
      ctx.fillRect(x0, TOP - 8, x1 - x0, 5);
      v.h.forEach(function (hd) {
        var ri = rowOf['w' + hd.w];
        if (ri === undefined) return;
        ctx.globalAlpha = 0.45; ctx.fillRect(x0, TOP + ri * ROW + 1, x1 - x0, ROW - 2); ctx.globalAlpha = 1;
      });
    });
  }

  var hasSel = false;
  function select(list, why, t) {
    selected = {}; hasSel = false; selT = t === undefined ? null : t;
    var a = Infinity, b = -Infinity;
    list.forEach(function (hd) {
      var r = rows[rowOf['w' + hd.w]];
      if (!r) return;
      for (var k = firstFrom(r, hd.e); k < r.to && H.e[k] <= hd.e + 0.001; k++)
        if (Math.abs(H.e[k] - hd.e) <= 0.001) { selected[k] = 1; hasSel = true; }
      a = Math.min(a, hd.g, hd.e); b = Math.max(b, hd.x);
    });
    if (t !== undefined && t !== null) { a = Math.min(a, t); b = Math.max(b, t); }
    if (a === Infinity) { draw(); return; }
    var pad = Math.max((b - a) * 0.15, 5);
    setView(a - pad, b + pad, why);
    box.scrollIntoView({ block: 'nearest' });
  }

  /* the story of the selected violation is outlined, the others not */
  function markStory(i) {
    Array.prototype.forEach.call(document.querySelectorAll('ol[data-story]'), function (ol) {
      ol.classList.toggle('tl-sel', +ol.getAttribute('data-story') === i);
    });
  }

  function selectViolation(i, t) {
    var v = D.violations[i];
    if (!v) return;
    markStory(i);
    box.setAttribute('data-selected', 'violation-' + (i + 1));
    select(v.h, 'violation-' + (i + 1), t);
  }

  function selectIncident(id) {
    var inc = null;
    D.incidents.forEach(function (x) { if (x.id === id) inc = x; });
    if (!inc) return;
    var list = [inc.cause];
    inc.listed.forEach(function (i) { if (D.violations[i]) list = list.concat(D.violations[i].h); });
    markStory(inc.listed.length ? inc.listed[0] : -1);
    box.setAttribute('data-selected', 'incident-' + id);
    select(list, 'incident-' + id);
    if (inc.s !== null) setView(Math.min(view[0], inc.s), Math.max(view[1], inc.e), 'incident-' + id);
  }

  /* hover: the hold under the pointer */
  function holdAt(x, y) {
    var ri = Math.floor((y - TOP) / ROW), r = rows[ri];
    if (!r || r.kind !== 'w' || x < LEFT) return -1;
    var t = tOf(x), tol = 3 * (view[1] - view[0]) / (width() - LEFT), best = -1;
    for (var k = firstFrom(r, t - tol); k < r.to && H.e[k] <= t + tol; k++)
      if (H.x[k] >= t - tol) best = k;
    return best;
  }
  function faultAt(x, y) {
    var ri = Math.floor((y - TOP) / ROW), r = rows[ri], t = tOf(x), hit = null;
    if (!r) return null;
    D.faults.forEach(function (f) {
      if (f.skipped || t < f.s || t > f.e) return;
      if (r.kind === 'w' ? (f.worker === r.id || (f.worker === null && f.node === null))
                         : f.node === r.id) hit = f;
    });
    return hit;
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }
  var drag = null;
  canvas.addEventListener('mousemove', function (ev) {
    var rc = canvas.getBoundingClientRect(), x = ev.clientX - rc.left, y = ev.clientY - rc.top;
    if (drag) {
      var dt = (drag.x - x) / (width() - LEFT - 8) * (view[1] - view[0]);
      drag.x = x; setView(view[0] + dt, view[1] + dt, 'pan'); return;
    }
    var k = holdAt(x, y), html = '';
    if (k >= 0) {
      html = '<b>w' + H.w[k] + '</b> holds <b>' + esc(D.res[H.r[k]]) + '</b><br>granted ' + fmt(H.g[k]) +
        ', entered ' + fmt(H.e[k]) + ', ' + ({ exit: 'exited', crash: 'killed', open: 'still in it at its log end' }[D.ends[H.end[k]]] || 'ended') + ' ' +
        fmt(H.x[k]) + '<br>fence ' + (H.f[k] === null ? 'none' : H.f[k]) + ', lease until ' +
        (H.l[k] === null ? 'no lease' : fmt(H.l[k]) + (H.x[k] > H.l[k] ? ' (overstayed ' +
        (H.x[k] - H.l[k]).toFixed(1) + ' ms)' : '')) + (H.rn[k] ? ', ' + H.rn[k] + ' renewals' : '') +
        (H.lost[k] ? ', lost notice' : '') + '<br>release: ' +
        ({ none: 'none logged', ok: 'ok', not_owner: 'not the owner any more', failed: 'failed' }[D.releases[H.rel[k]]] || '-');
    } else {
      var f = faultAt(x, y);
      if (f) html = '<b>' + esc(f.name) + '</b> #' + f.id + ' ' + fmt(f.s) + ' to ' + fmt(f.e) +
        (f.worker === null && f.node === null ? '<br>not one worker\'s or node\'s: shaded on every worker row'
          : f.node !== null && f.worker === null ? '<br>a node fault: every worker talking to node_' + f.node + ' meets it' : '');
    }
    if (html) {
      tip.innerHTML = html; tip.style.display = 'block';
      tip.style.left = Math.min(x + 12, width() - 300) + 'px'; tip.style.top = (y + 14) + 'px';
    } else tip.style.display = 'none';
  });
  canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; drag = null; });
  canvas.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX - canvas.getBoundingClientRect().left }; });
  window.addEventListener('mouseup', function () { drag = null; });
  canvas.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var rc = canvas.getBoundingClientRect(), t = tOf(ev.clientX - rc.left);
    var f = ev.deltaY > 0 ? 1.25 : 0.8;
    setView(t - (t - view[0]) * f, t + (view[1] - t) * f, 'zoom');
  }, { passive: false });
  canvas.addEventListener('dblclick', function () {
    selected = {}; hasSel = false; selT = null; box.removeAttribute('data-selected'); markStory(-1);
    setView(full[0], full[1], 'reset');
  });
  window.addEventListener('resize', draw);

  /* the tables and stories link to the timeline */
  function on(sel, fn) {
    Array.prototype.forEach.call(document.querySelectorAll(sel), function (el) {
      el.addEventListener('click', function (ev) { if (ev.target.tagName !== 'A') fn(el); });
    });
  }
  on('tr[data-violation]', function (el) { selectViolation(+el.getAttribute('data-violation')); });
  on('tr[data-incident]', function (el) { selectIncident(+el.getAttribute('data-incident')); });
  on('li[data-t]', function (el) {
    var v = el.closest('[data-story]');
    selectViolation(v ? +v.getAttribute('data-story') : -1, +el.getAttribute('data-t'));
  });

  /* paged tables: 20 rows a page */
  Array.prototype.forEach.call(document.querySelectorAll('table.paged'), function (tb) {
    var trs = tb.querySelectorAll('tr[data-row]'), per = 20, pages = Math.ceil(trs.length / per), page = 0;
    if (pages < 2) return;
    var nav = document.createElement('div');
    nav.className = 'pager';
    tb.parentNode.insertBefore(nav, tb.nextSibling);
    function show() {
      for (var k = 0; k < trs.length; k++) trs[k].style.display = Math.floor(k / per) === page ? '' : 'none';
      nav.innerHTML = '';
      [['\u2039 previous', page - 1], ['next \u203a', page + 1]].forEach(function (b) {
        var bt = document.createElement('button');
        bt.textContent = b[0]; bt.disabled = b[1] < 0 || b[1] >= pages;
        bt.addEventListener('click', function () { page = b[1]; show(); });
        nav.appendChild(bt);
      });
      var s = document.createElement('span');
      s.textContent = ' page ' + (page + 1) + ' of ' + pages + ' (' + trs.length + ' rows)';
      nav.appendChild(s);
      tb.setAttribute('data-page', page + 1);
    }
    show();
  });
  /* for tests and the console: where worker w's row is at instant t (client
   * coordinates), and the first violation's overlap middle as [worker, t] */
  window.lsTimeline = {
    point: function (w, t) {
      var rc = canvas.getBoundingClientRect(), ri = rowOf['w' + w];
      return ri === undefined ? null : { x: rc.left + xOf(t), y: rc.top + TOP + ri * ROW + ROW / 2 };
    },
    firstOverlap: function () {
      var v = D.violations[0];
      return v ? [v.h[0].w, v.s + v.d / 2] : null;
    }
  };
  setView(full[0], full[1], 'initial');
})();
