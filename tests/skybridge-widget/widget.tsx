// A widget written the way the skybridge framework (2.0, from npm) documents it for ChatGPT's
// Apps SDK: its hooks only, no Porthole-specific code. porthole-apps-sdk-server serves it as
// `text/html+skybridge` for its `topping_board` tool. skybridge runs it on the MCP Apps bridge
// with a `window.openai` overlay (widget state, follow-up messages, links), so in Porthole it
// exercises both at once, in one frame.
import {
  mountView,
  useCallTool,
  useDisplayMode,
  useHost,
  useOpenExternal,
  useRegisterViewTool,
  useSendFollowUpMessage,
  useToolInfo,
  useUser,
  useViewState,
} from "skybridge/web";

type Board = { title: string; toppings: string[] };
type Favourite = { favourite: string | null };

function ToppingBoard() {
  const info = useToolInfo<{
    input: { occasion: string };
    output: Board;
    responseMetadata: { note?: string };
  }>();
  const vote = useCallTool<{ topping: string }, { structuredContent: { votes: number; topping: string } }>(
    "vote_topping",
  );
  const secret = useCallTool("secret_recipe");
  const [state, setState] = useViewState<Favourite>({ favourite: null });
  const followUp = useSendFollowUpMessage();
  const openExternal = useOpenExternal();
  const { theme } = useUser();
  const [mode] = useDisplayMode();
  const host = useHost();
  // A tool of the view's own, offered to the model while the board is shown.
  useRegisterViewTool(
    {
      name: "current_pick",
      description: "The topping the person picked on the board.",
      annotations: { readOnlyHint: true },
    },
    () => ({
      content: [{ type: "text", text: `The person picked ${state?.favourite ?? "nothing yet"}.` }],
    }),
  );

  if (!info.isSuccess || !info.output) {
    return <p data-testid="pending">Loading the toppings…</p>;
  }
  const board = info.output;
  const favourite = state?.favourite ?? null;
  return (
    <main>
      <h1 data-testid="title">{board.title}</h1>
      <p>Occasion: {info.input?.occasion ?? "?"}</p>
      <ul>
        {board.toppings.map((topping) => (
          <li key={topping}>
            {topping}{" "}
            <button data-testid={`pick-${topping}`} onClick={() => setState({ favourite: topping })}>
              Pick
            </button>
          </li>
        ))}
      </ul>
      <p data-testid="favourite">Favourite: {favourite ?? "none"}</p>
      <p>Note: {info.responseMetadata?.note ?? "none"}</p>
      <button
        data-testid="vote-button"
        onClick={() => vote.callTool({ topping: favourite ?? "margherita" })}
      >
        Vote
      </button>
      <p data-testid="votes">
        Votes:{" "}
        {vote.isSuccess
          ? `${vote.data.structuredContent.votes} for ${vote.data.structuredContent.topping}`
          : vote.isError
            ? "refused"
            : "?"}
      </p>
      <button data-testid="secret-button" onClick={() => secret.callTool()}>
        Secret
      </button>
      <p data-testid="secret">
        Secret: {secret.isError ? "refused" : secret.isSuccess ? "given" : "?"}
      </p>
      <button
        data-testid="follow-up-button"
        onClick={() => followUp(`Order a pizza with ${favourite ?? "margherita"}`)}
      >
        Order
      </button>
      <button data-testid="link-button" onClick={() => openExternal("https://example.com/toppings")}>
        More toppings
      </button>
      <p>
        Theme: {theme}; Mode: {mode}; Host: {host.name ?? "?"}
      </p>
    </main>
  );
}

mountView(<ToppingBoard />);
