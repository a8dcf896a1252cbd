// label_overlaps.js - run by headless Chromium in a copy of a report page (tests/cli/
// test_report_page.sh adds it; the report itself runs no script): every chart's labels (its
// SVG <text> elements with something to show) as the browser laid them out, and each pair of
// them whose boxes overlap, as JSON into a new pre element (id rt-overlaps): {svgs, labels, overlaps:
// [[chart id, text, text, overlap width, overlap height]]}.
(function () {
    var out = [], nlabels = 0, svgs = document.querySelectorAll("svg");
    svgs.forEach(function (svg) {
        var boxes = [];
        svg.querySelectorAll("text").forEach(function (t) {
            var s = t.textContent.trim(), r = t.getBoundingClientRect();
            if (s && r.width > 0 && r.height > 0)
                boxes.push({t: s, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom});
        });
        nlabels += boxes.length;
        for (var i = 0; i < boxes.length; i++)
            for (var j = i + 1; j < boxes.length; j++) {
                var a = boxes[i], b = boxes[j];
                var w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
                var h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
                if (w > 0 && h > 0)
                    out.push([svg.id, a.t, b.t, Math.round(w * 10) / 10, Math.round(h * 10) / 10]);
            }
    });
    var pre = document.createElement("pre");
    pre.id = "rt-overlaps";
    pre.textContent = JSON.stringify({svgs: svgs.length, labels: nlabels, overlaps: out});
    document.body.appendChild(pre);
})();
