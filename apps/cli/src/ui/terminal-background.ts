/**
 * Whether the terminal's background is dark or light, as the terminal says
 * when asked with OSC 11 (`ESC ] 11 ; ? ST`, answered `ESC ] 11 ; rgb:RRRR/GGGG/BBBB ST`).
 * A device-attributes request (DA1, `ESC [ c`) goes right after it: every
 * terminal answers that one, in order, so its answer arriving first means
 * the terminal will not answer the colour question, and nobody waits for
 * the timeout (kept for a terminal that answers nothing at all).
 *
 * Only on a terminal (both streams), and only while nothing else reads the
 * input: the answer comes in on it. Keys typed meanwhile are put back for
 * whoever reads next.
 */

export type Background = "dark" | "light";

export interface QueryStreams {
  input: {
    isTTY?: boolean;
    isRaw?: boolean;
    setRawMode?(mode: boolean): unknown;
    on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
    off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
    resume(): unknown;
    pause(): unknown;
    unshift(chunk: Buffer): unknown;
  };
  output: { isTTY?: boolean; write(text: string): unknown };
}

/** The colour question, then the device-attributes one. */
export const BACKGROUND_QUERY = "\x1b]11;?\x1b\\\x1b[c";
/** The colour answer: 1 to 4 hex digits per channel (`rgba:` too), ended by BEL or ST. */
const COLOUR_REPLY =
  /\x1b\]11;rgba?:([0-9a-f]{1,4})\/([0-9a-f]{1,4})\/([0-9a-f]{1,4})(?:\/[0-9a-f]{1,4})?(?:\x07|\x1b\\)/i;
const DA1_REPLY = /\x1b\[\?[0-9;]*c/;

/** Dark or light, by the perceived lightness of an `rgb:` answer's channels. */
export function backgroundOf(reply: string): Background | undefined {
  const m = COLOUR_REPLY.exec(reply);
  if (!m) return undefined;
  const [r, g, b] = [m[1]!, m[2]!, m[3]!].map((hex) => Number.parseInt(hex, 16) / (16 ** hex.length - 1));
  const luma = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return luma < 0.5 ? "dark" : "light";
}

/** Asks the terminal; undefined when it is not one, does not answer, or answers no colour within `timeoutMs`. */
export function queryBackground(
  streams: QueryStreams,
  timeoutMs = 250,
  signal?: AbortSignal,
): Promise<Background | undefined> {
  const { input, output } = streams;
  if (input.isTTY !== true || output.isTTY !== true || input.setRawMode === undefined) {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const wasRaw = input.isRaw === true;
    let got = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(timer);
      input.off("data", onData);
      input.pause();
      input.setRawMode?.(wasRaw);
      const answer = backgroundOf(got);
      // Whatever else came (keys typed meanwhile) goes back for the prompt.
      const rest = got.replace(COLOUR_REPLY, "").replace(DA1_REPLY, "");
      if (rest !== "") input.unshift(Buffer.from(rest, "latin1"));
      resolve(answer);
    };
    const onData = (chunk: Buffer | string) => {
      got += typeof chunk === "string" ? chunk : chunk.toString("latin1");
      if (DA1_REPLY.test(got)) finish();
    };
    input.setRawMode?.(true);
    input.on("data", onData);
    input.resume();
    timer = setTimeout(finish, timeoutMs);
    // Ended early (the prompt will not wait): the terminal is given back as it was.
    signal?.addEventListener("abort", finish, { once: true });
    output.write(BACKGROUND_QUERY);
  });
}

/**
 * The background some terminals (rxvt, Konsole, some vim setups) put in
 * COLORFGBG (`fg;bg`, ANSI colour numbers): 7 and 9-15 are light, the rest
 * dark. For a terminal that does not answer OSC 11.
 */
export function backgroundFromEnv(env: Readonly<Record<string, string | undefined>>): Background | undefined {
  const bg = env.COLORFGBG?.split(";").at(-1);
  if (bg === undefined || !/^\d+$/.test(bg)) return undefined;
  const n = Number(bg);
  return n === 7 || (n >= 9 && n <= 15) ? "light" : "dark";
}
