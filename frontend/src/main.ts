import "./styles.css";
import { GraphApi } from "./api/client";
import { App } from "./app";
import { currentLang } from "./i18n";
import { startThemeTracking } from "./theme";

startThemeTracking();
document.documentElement.lang = currentLang() === "zh" ? "zh-CN" : "en";
const api = new GraphApi("./api/");
const app = new App(api, document.getElementById("root")!);
// Exposed for the frame-time benchmark (bench/frontend) and for debugging.
(window as unknown as { graphAscend: App }).graphAscend = app;
void app.start();
