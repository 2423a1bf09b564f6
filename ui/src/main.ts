import { mount } from "svelte";
import App from "./App.svelte";
import PopOut from "./PopOut.svelte";
import "./styles.css";

// The same page runs the main window, each pop-out window of a view (index.html#popout), and the
// windows that show one view with nothing around it for `porthole check` and `porthole snapshot`
// (index.html#bare-light, #bare-dark: the theme the picture is taken in).
const target = document.getElementById("app")!;
const hash = window.location.hash;
if (hash === "#popout") mount(PopOut, { target });
else if (hash === "#bare-light" || hash === "#bare-dark") mount(PopOut, { target, props: { bare: hash === "#bare-dark" ? "dark" : "light" } });
else mount(App, { target });
