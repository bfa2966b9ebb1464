// The dashboard page: one event stream from the operator listener, a `history` event with
// the last ten minutes, then a `tick` event a second. Each tick updates the figures, the
// charts and the tables in place; the page never reloads.
(function () {
  'use strict';

  var WINDOW_MS = 10 * 60 * 1000;
  var points = [];
  var colors = { blue: '#2f6fde', red: '#d64545', green: '#2e9d5b', amber: '#c98a12', violet: '#7b52c7' };

  function get(name) { return function (p) { return p[name]; }; }
  function actors(kind) { return function (p) { return (p.actors || {})[kind] || 0; }; }
  function mib(p) { return p.memory_bytes / (1024 * 1024); }

  var charts = [
    ['chart-requests', [
      { label: 'requests/s', color: colors.blue, value: get('requests_per_s') },
      { label: '429s/s', color: colors.red, value: get('rate_limited_per_s') }]],
    ['chart-latency', [
      { label: 'p50', color: colors.blue, value: get('latency_p50_ms') },
      { label: 'p99', color: colors.amber, value: get('latency_p99_ms') }]],
    ['chart-deliveries', [
      { label: 'pending', color: colors.violet, value: get('pending_deliveries') },
      { label: 'failing/s', color: colors.red, value: get('failed_attempts_per_s') },
      { label: 'delivered/s', color: colors.green, value: get('delivered_per_s') }]],
    ['chart-flush', [
      { label: 'mean', color: colors.blue, value: get('flush_mean_ms') },
      { label: 'p99', color: colors.amber, value: get('flush_p99_ms') }]],
    ['chart-actors', [
      { label: 'workspace', color: colors.blue, value: actors('workspace') },
      { label: 'delivery', color: colors.violet, value: actors('endpoint_delivery') },
      { label: 'relay', color: colors.green, value: actors('channel_relay') }]],
    ['chart-memory', [
      { label: 'resident', color: colors.blue, value: mib }]]
  ].map(function (c) {
    return new window.LineChart(document.getElementById(c[0]), { series: c[1], windowMs: WINDOW_MS });
  });

  function whole(v) { return v === null || v === undefined ? '–' : Math.round(v).toLocaleString('en-US'); }
  function decimal(v) {
    if (v === null || v === undefined) return '–';
    return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 1 : 2);
  }

  function setFigure(name, text) {
    var nodes = document.querySelectorAll('[data-figure="' + name + '"]');
    for (var i = 0; i < nodes.length; i++) nodes[i].textContent = text;
  }

  function showPoint(p) {
    setFigure('requests_per_s', decimal(p.requests_per_s));
    setFigure('requests_total', whole(p.requests_total));
    setFigure('rate_limited_per_s', decimal(p.rate_limited_per_s));
    setFigure('rate_limited_total', whole(p.rate_limited_total));
    setFigure('latency_p50_ms', decimal(p.latency_p50_ms));
    setFigure('latency_p99_ms', decimal(p.latency_p99_ms));
    setFigure('actors_workspace', whole(actors('workspace')(p)));
    setFigure('actors_endpoint_delivery', whole(actors('endpoint_delivery')(p)));
    setFigure('actors_channel_relay', whole(actors('channel_relay')(p)));
    setFigure('mailbox_depth', whole(p.mailbox_depth));
    setFigure('pending_deliveries', whole(p.pending_deliveries));
    setFigure('failed_attempts_per_s', decimal(p.failed_attempts_per_s));
    setFigure('delivered_per_s', decimal(p.delivered_per_s));
    setFigure('endpoints_disabled_total', whole(p.endpoints_disabled_total));
    setFigure('flush_mean_ms', decimal(p.flush_mean_ms));
    setFigure('flush_p99_ms', decimal(p.flush_p99_ms));
    setFigure('flushes_per_s', decimal(p.flushes_per_s));
    setFigure('memory_mib', decimal(mib(p)));
    document.getElementById('updated').textContent = new Date(p.t).toLocaleTimeString();
    document.body.setAttribute('data-updated', String(p.t));
  }

  function cell(text, className) {
    var td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  function fillTable(id, rows, columns, empty) {
    var body = document.getElementById(id);
    while (body.firstChild) body.removeChild(body.firstChild);
    if (!rows.length) {
      var tr = document.createElement('tr');
      var td = cell(empty, 'muted');
      td.colSpan = columns.length;
      tr.appendChild(td);
      body.appendChild(tr);
      return;
    }
    rows.forEach(function (row) {
      var tr = document.createElement('tr');
      columns.forEach(function (c) { tr.appendChild(cell(c[0](row), c[1])); });
      body.appendChild(tr);
    });
  }

  function showTables(t) {
    if (!t) return;
    fillTable('workspaces', t.workspaces, [
      [function (r) { return r.id; }, 'id'],
      [function (r) { return r.name; }],
      [function (r) { return decimal(r.requests_per_s); }, 'num'],
      [function (r) { return decimal(r.rate_limited_per_s); }, 'num']], 'no traffic');
    fillTable('mailboxes', t.mailboxes, [
      [function (r) { return r.kind; }],
      [function (r) { return r.key; }, 'id'],
      [function (r) { return whole(r.depth); }, 'num'],
      [function (r) { return whole(r.handled); }, 'num']], 'no live actors');
  }

  function redraw() {
    var now = points.length ? points[points.length - 1].t : Date.now();
    charts.forEach(function (c) { c.draw(points, now); });
  }

  function status(state) {
    var el = document.getElementById('status');
    el.setAttribute('data-state', state);
    el.textContent = state;
  }

  var source = new EventSource('/dashboard/events');
  source.addEventListener('history', function (e) {
    var h = JSON.parse(e.data);
    points = h.points || [];
    if (points.length) showPoint(points[points.length - 1]);
    showTables(h.tables);
    redraw();
    status('live');
  });
  source.addEventListener('tick', function (e) {
    var tick = JSON.parse(e.data);
    points.push(tick.point);
    var start = tick.point.t - WINDOW_MS;
    while (points.length && points[0].t < start) points.shift();
    showPoint(tick.point);
    showTables(tick.tables);
    redraw();
    status('live');
  });
  source.onerror = function () {
    // A closed stream was refused (the session ended): back to the login form.
    if (source.readyState === EventSource.CLOSED) { window.location.assign('/'); return; }
    status('reconnecting');
  };
  window.addEventListener('resize', redraw);
})();
