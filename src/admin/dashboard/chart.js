// A small line chart on a canvas: time on the x axis (a fixed window that ends now), one
// or more series on the y axis from zero to a round maximum, a legend with each series'
// latest value. A series is { label, color, value: function (point) -> number | null };
// a null value, or a gap in time longer than `gapMs`, breaks the line.
(function () {
  'use strict';

  function niceCeil(v) {
    if (!(v > 0)) return 1;
    var base = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) {
      if (steps[i] * base >= v) return steps[i] * base;
    }
    return 10 * base;
  }

  function shortNumber(v) {
    if (v === null || v === undefined || isNaN(v)) return '–';
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(1) + 'G';
    if (a >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (a >= 1e4) return (v / 1e3).toFixed(0) + 'k';
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    return v.toFixed(2).replace(/\.?0+$/, '') || '0';
  }

  function LineChart(canvas, options) {
    this.canvas = canvas;
    this.series = options.series;
    this.windowMs = options.windowMs || 10 * 60 * 1000;
    this.gapMs = options.gapMs || 5000;
  }

  LineChart.prototype.resize = function () {
    var ratio = window.devicePixelRatio || 1;
    var w = this.canvas.clientWidth, h = this.canvas.clientHeight;
    if (this.canvas.width !== Math.round(w * ratio) || this.canvas.height !== Math.round(h * ratio)) {
      this.canvas.width = Math.round(w * ratio);
      this.canvas.height = Math.round(h * ratio);
    }
    var ctx = this.canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    return { ctx: ctx, w: w, h: h };
  };

  LineChart.prototype.draw = function (points, now) {
    var size = this.resize(), ctx = size.ctx, w = size.w, h = size.h;
    var left = 44, right = 8, top = 22, bottom = 18;
    var plotW = Math.max(10, w - left - right), plotH = Math.max(10, h - top - bottom);
    var start = now - this.windowMs;
    var self = this;
    var visible = points.filter(function (p) { return p.t >= start; });

    var max = 0;
    this.series.forEach(function (s) {
      visible.forEach(function (p) {
        var v = s.value(p);
        if (v !== null && v !== undefined && v > max) max = v;
      });
    });
    max = niceCeil(max);

    ctx.clearRect(0, 0, w, h);
    ctx.font = '11px system-ui, sans-serif';
    ctx.lineWidth = 1;
    for (var i = 0; i <= 4; i++) {
      var y = top + plotH - (plotH * i) / 4;
      ctx.strokeStyle = '#e3e6ec';
      ctx.beginPath(); ctx.moveTo(left, y + 0.5); ctx.lineTo(left + plotW, y + 0.5); ctx.stroke();
      ctx.fillStyle = '#6b7385';
      ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
      ctx.fillText(shortNumber((max * i) / 4), left - 6, y);
    }
    ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    [[0, '-10m'], [0.5, '-5m'], [1, 'now']].forEach(function (tick) {
      ctx.fillText(tick[1], left + plotW * tick[0], top + plotH + 4);
    });

    var x = function (t) { return left + ((t - start) / self.windowMs) * plotW; };
    var yOf = function (v) { return top + plotH - (v / max) * plotH; };
    var legendX = left;
    this.series.forEach(function (s) {
      ctx.strokeStyle = s.color;
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      var drawing = false, lastT = null, latest = null;
      visible.forEach(function (p) {
        var v = s.value(p);
        if (v === null || v === undefined || isNaN(v)) { drawing = false; return; }
        if (drawing && lastT !== null && p.t - lastT > self.gapMs) drawing = false;
        if (drawing) ctx.lineTo(x(p.t), yOf(v)); else ctx.moveTo(x(p.t), yOf(v));
        drawing = true; lastT = p.t; latest = v;
      });
      ctx.stroke();
      var label = s.label + ' ' + shortNumber(latest);
      ctx.fillStyle = s.color;
      ctx.fillRect(legendX, 6, 10, 10);
      ctx.fillStyle = '#1d2433';
      ctx.textAlign = 'left'; ctx.textBaseline = 'middle';
      ctx.fillText(label, legendX + 14, 11);
      legendX += ctx.measureText(label).width + 30;
    });
  };

  window.LineChart = LineChart;
  window.LineChart.shortNumber = shortNumber;
})();
