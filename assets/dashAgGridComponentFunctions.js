/* Cell renderers for dash-ag-grid: links from table cells to detail pages. */
var dagcomfuncs = (window.dashAgGridComponentFunctions = window.dashAgGridComponentFunctions || {});

dagcomfuncs.Link = function (props) {
  if (props.value === null || props.value === undefined || props.value === "") {
    return "";
  }
  var prefix = (props.colDef.cellRendererParams || {}).prefix || "";
  return React.createElement("a", { href: prefix + encodeURIComponent(props.value) }, String(props.value));
};

/* The sentence an empty grid shows instead of "No Rows To Show" (text only: no HTML is evaluated). */
dagcomfuncs.EmptyMessage = function (props) {
  return React.createElement("span", { className: "grid-empty" }, String(props.message || "No rows"));
};

/* The tuning page's value column: the editor that fits each gdpconfig parameter's type. */
var dagfuncs = (window.dashAgGridFunctions = window.dashAgGridFunctions || {});

dagfuncs.tuneEditor = function (params) {
  var d = params.data;
  if (d.kind === "switch") {
    return { component: "agCheckboxCellEditor" };
  }
  if (d.kind === "select") {
    return { component: "agSelectCellEditor", params: { values: d.choices } };
  }
  if (d.kind === "number") {
    // step "any": a fraction typed for an integer parameter reaches the server, which refuses it with the range
    return { component: "agNumberCellEditor", params: { step: "any", showStepperButtons: true } };
  }
  return { component: "agTextCellEditor" };
};

dagfuncs.tuneRenderer = function (params) {
  return params.data.kind === "switch" ? { component: "agCheckboxCellRenderer" } : undefined;
};
