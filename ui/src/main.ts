import { mount } from "svelte";
import App from "./App.svelte";
import PopOut from "./PopOut.svelte";
import "./styles.css";

// The same page runs the main window and each pop-out window of a view (index.html#popout).
const target = document.getElementById("app")!;
if (window.location.hash === "#popout") mount(PopOut, { target });
else mount(App, { target });
