// privasis-bench board: sorting, filters and search. The page's Content-Security-Policy lets only this file run.
(function () {
  "use strict";
  function byId(id) { return document.getElementById(id); }
  var controls = { family: byId("filter-family"), task: byId("filter-task"), track: byId("filter-track"),
                   judge: byId("filter-judge") };
  var search = byId("search"), count = byId("shown-count");

  function matches(el, key) {
    var want = controls[key] ? controls[key].value : "";
    if (!want) { return true; }
    var own = el.getAttribute("data-" + key);
    return own === null || own === want;
  }

  function apply() {
    var words = (search ? search.value : "").toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    document.querySelectorAll("div.group").forEach(function (group) {
      var groupOk = matches(group, "family") && matches(group, "task") && matches(group, "track");
      var visible = 0;
      group.querySelectorAll("tbody tr[data-search]").forEach(function (row) {
        var text = row.getAttribute("data-search") || "";
        var ok = groupOk && matches(row, "judge") && words.every(function (w) { return text.indexOf(w) >= 0; });
        row.classList.toggle("hidden", !ok);
        if (ok) { visible += 1; }
      });
      group.classList.toggle("hidden", visible === 0);
      shown += visible;
    });
    document.querySelectorAll("g.point[data-task]").forEach(function (point) {
      point.classList.toggle("faded", !(matches(point, "task") && matches(point, "track")));
    });
    document.querySelectorAll("table.cross tbody tr").forEach(function (row) {
      var text = row.getAttribute("data-search") || "";
      var ok = matches(row, "track") && words.every(function (w) { return text.indexOf(w) >= 0; });
      row.classList.toggle("hidden", !ok);
    });
    if (count) { count.textContent = shown + " row" + (shown === 1 ? "" : "s") + " shown"; }
  }

  Object.keys(controls).forEach(function (key) {
    if (controls[key]) { controls[key].addEventListener("change", apply); }
  });
  if (search) { search.addEventListener("input", apply); }

  document.querySelectorAll("table.board").forEach(function (table) {
    var heads = table.querySelectorAll("th[data-sort]");
    heads.forEach(function (th) {
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var desc = numeric ? !th.classList.contains("desc") : th.classList.contains("asc");
        if (th.classList.contains("rank")) { desc = th.classList.contains("asc"); }
        heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(desc ? "desc" : "asc");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          if (numeric && (x === "" || y === "")) { return (x === "") - (y === ""); }
          var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return desc ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  apply();
})();
