/* Table filters and sorts in the address bar: a grid with the class "url-state-X" keeps them in ?X_f= and ?X_s=. */
(function () {
  "use strict";
  var bound = new WeakSet();
  var scheduled = false;

  function query() {
    return new URLSearchParams(window.location.search);
  }

  // replaceState, not pushState: a filter typed letter by letter must not fill the back button's history
  function write(name, value) {
    var params = query();
    if (value) {
      params.set(name, value);
    } else {
      params.delete(name);
    }
    var q = params.toString();
    var href = window.location.pathname + (q ? "?" + q : "");
    if (href !== window.location.pathname + window.location.search) {
      window.history.replaceState(window.history.state, "", href);
    }
  }

  // URL form {column: value} (text contains, number equals) or {column: {type, filter}} -> AG Grid filterModel
  function toModel(text) {
    var raw;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      return {};
    }
    var model = {};
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
      return model;
    }
    Object.keys(raw).forEach(function (col) {
      var v = raw[col];
      if (typeof v === "number") {
        model[col] = { filterType: "number", type: "equals", filter: v };
      } else if (typeof v === "string") {
        model[col] = { filterType: "text", type: "contains", filter: v };
      } else if (v && typeof v === "object" && typeof v.type === "string" && v.filter !== undefined) {
        model[col] = { filterType: typeof v.filter === "number" ? "number" : "text", type: v.type, filter: v.filter };
      }
    });
    return model;
  }

  function fromModel(model) {
    var out = {};
    Object.keys(model || {}).forEach(function (col) {
      var m = model[col];
      if (!m || m.filter === undefined || m.filter === null || m.filter === "") {
        return; // two-condition and set filters are not carried
      }
      var plain = (m.filterType === "text" && m.type === "contains") || (m.filterType === "number" && m.type === "equals");
      out[col] = plain ? m.filter : { type: m.type, filter: m.filter };
    });
    return out;
  }

  function sortText(api) {
    return api
      .getColumnState()
      .filter(function (c) {
        return c.sort;
      })
      .sort(function (a, b) {
        return (a.sortIndex || 0) - (b.sortIndex || 0);
      })
      .map(function (c) {
        return c.colId + ":" + c.sort;
      })
      .join(",");
  }

  // the shared filter of the URL, as an AG Grid filterModel (null when the URL has none)
  function sharedFilter(key) {
    var f = query().get(key + "_f");
    var model = f ? toModel(f) : {};
    return Object.keys(model).length ? model : null;
  }

  // the filter goes through the component's own prop too (dash-ag-grid applies it when the grid is ready and keeps
  // it when a callback swaps the rows in), so Dash callbacks reading filterModel see it
  function applyFilter(api, id, model) {
    api.setFilterModel(JSON.parse(JSON.stringify(model)));
    if (window.dash_clientside && window.dash_clientside.set_props) {
      window.dash_clientside.set_props(id, { filterModel: JSON.parse(JSON.stringify(model)) }); // a new object, or Dash sees no change
    }
  }

  function restoreSort(api, key) {
    var s = query().get(key + "_s");
    var state = [];
    (s || "").split(",").forEach(function (part) {
      var i = part.lastIndexOf(":");
      var dir = part.slice(i + 1);
      if (i > 0 && (dir === "asc" || dir === "desc")) {
        state.push({ colId: part.slice(0, i), sort: dir, sortIndex: state.length });
      }
    });
    if (state.length) {
      api.applyColumnState({ state: state, defaultState: { sort: null } });
    }
  }

  function bind(el, key) {
    var pending = sharedFilter(key);
    var resets = 20; // a bound on putting the shared filter back, should something keep clearing it
    window.dash_ag_grid.getApiAsync(el.id).then(function (api) {
      restoreSort(api, key);
      // the component's prop syncs (first render, rows swapped in by a callback) can clear the shared filter before
      // the operator has touched it: put it back until they do
      function keep() {
        if (pending && resets-- > 0 && !Object.keys(fromModel(api.getFilterModel())).length) {
          applyFilter(api, el.id, pending);
          return true;
        }
        return false;
      }
      api.addEventListener("rowDataUpdated", keep);
      api.addEventListener("filterChanged", function (e) {
        if (pending && e.source === "api" && keep()) {
          return;
        }
        if (e.source !== "api") {
          pending = null; // the operator changed a filter: the URL follows from now on
        }
        var m = fromModel(api.getFilterModel());
        write(key + "_f", Object.keys(m).length ? JSON.stringify(m) : "");
      });
      api.addEventListener("sortChanged", function () {
        write(key + "_s", sortText(api));
      });
      keep();
    });
  }

  function scan() {
    scheduled = false;
    if (!window.dash_ag_grid || !window.dash_ag_grid.getApiAsync) {
      return;
    }
    document.querySelectorAll("[class*='url-state-']").forEach(function (el) {
      var m = el.className.match(/(?:^|\s)url-state-([a-z]+)(?:\s|$)/);
      if (m && el.id && !bound.has(el)) {
        bound.add(el);
        bind(el, m[1]);
      }
    });
  }

  // pages that rebuild their whole URL (tuning, DIRAC permalinks) keep the tables' filters and sorts with this
  window.gridUrlState = {
    keep: function (href) {
      var url = new URL(href, window.location.origin);
      query().forEach(function (value, name) {
        if (/^[a-z]+_[fs]$/.test(name) && !url.searchParams.has(name)) {
          url.searchParams.set(name, value);
        }
      });
      return url.pathname + url.search;
    },
  };

  // grids also appear later (built by callbacks): look for new ones at most once per frame
  new MutationObserver(function () {
    if (!scheduled) {
      scheduled = true;
      window.requestAnimationFrame(scan);
    }
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
