// entry.js is the echarts that ratelab loads: the core, the line and
// scatter charts, the components the chart options use (views/charts.go)
// and the canvas renderer, exposed as the global `echarts` that static/js/charts.js
// calls (init, getInstanceByDom, dispose). The dark theme is part of
// the core. A chart option that needs another chart type or component
// (bar, dataZoom, markLine...) must add it here and rebuild.
import { use } from "echarts/core";
import { LineChart, ScatterChart } from "echarts/charts";
import {
  AriaComponent,
  GridComponent,
  LegendPlainComponent,
  TooltipComponent,
} from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";

use([
  LineChart,
  ScatterChart, // the request timeline
  GridComponent,
  LegendPlainComponent, // plain legends only: charts.js wraps a long one into rows
  TooltipComponent,
  AriaComponent,
  CanvasRenderer,
]);

// Only what pages call is exported, so the bundler leaves out the rest of
// echarts' API (graphic helpers, formatters, maps...).
export {
  connect,
  disconnect,
  dispose,
  getInstanceByDom,
  getInstanceById,
  init,
  registerTheme,
  version,
} from "echarts/core";
