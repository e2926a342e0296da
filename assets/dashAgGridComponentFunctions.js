/* Cell renderers for dash-ag-grid: links from table cells to detail pages. */
var dagcomfuncs = (window.dashAgGridComponentFunctions = window.dashAgGridComponentFunctions || {});

dagcomfuncs.Link = function (props) {
  if (props.value === null || props.value === undefined || props.value === "") {
    return "";
  }
  var prefix = (props.colDef.cellRendererParams || {}).prefix || "";
  return React.createElement("a", { href: prefix + encodeURIComponent(props.value) }, String(props.value));
};
