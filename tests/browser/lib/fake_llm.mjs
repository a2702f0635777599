// What the scripted fake LLM (tests/fixtures/fake_llm.py) answers, as the scenarios see it
// through Hermes or as an OpenAI-compatible upstream.

/** A plain message, and the answer to any message that triggers nothing else. */
export const PLAIN_PROMPT = 'hello there';
export const PLAIN_ANSWER = 'Hello from the fake LLM!';
/** Makes it call the terminal with `rm -rf`, which Hermes asks approval for. */
export const DANGEROUS_PROMPT = 'do something dangerous';
/** How its answer after a tool call starts. */
export const TOOL_ANSWER_PREFIX = 'Tool result received:';
/** Its answer, and the reasoning before it, when it is given no tools (OpenAI-compatible). */
export const NO_TOOLS_ANSWER = 'Fake aux reply.';
export const NO_TOOLS_REASONING = 'Short thought.';
