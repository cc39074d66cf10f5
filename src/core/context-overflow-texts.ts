/**
 * What providers say when a request does not fit the context window, with the numbers their texts
 * carry (context limit, input tokens, requested output). Pure: text in, numbers out.
 */

/** What an overflow text says: the numbers it carried, and which part is too large when it says so. */
export interface ContextOverflowNumbers {
  limit?: number;
  input?: number;
  output?: number;
  /** `output`: only the requested output does not fit (a smaller output budget helps); `input`: the input alone does not. */
  part?: 'input' | 'output';
}

type Numbers = ContextOverflowNumbers;
type Read = (n: (group: number) => number | undefined) => Numbers;
const limitInput: Read = (n) => ({ limit: n(1), input: n(2) });
const inputLimit: Read = (n) => ({ input: n(1), limit: n(2) });

/** Real provider texts, most specific first. `n(i)` reads capture group i as a number ("242,201" too). */
const OVERFLOW_RULES: ReadonlyArray<readonly [RegExp, Read]> = [
  // vLLM ≥0.10: "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context
  // length is 4096 tokens and your request has 2104 input tokens (2000 > 4096 - 2104)."
  // (claude-code-best/claude-code#272; vllm serving_engine.py)
  [
    /is too large: ([\d,]+)\.? this model's maximum context length is ([\d,]+) tokens and your request has ([\d,]+) input tokens/i,
    (n) => ({ output: n(1), limit: n(2), input: n(3) }),
  ],
  // OpenAI, Azure OpenAI, older vLLM, DeepSeek: "This model's maximum context length is 4096 tokens.
  // However, you requested 4130 tokens (3130 in the messages, 1000 in the completion). Please reduce the
  // length of the messages or completion." (Chanzhaoyu/chatgpt-web#354, Azure/azure-sdk-for-net#41892);
  // "(6683 in the messages, 730 in the functions, and 800 in the completion)" (FoundationAgents/
  // OpenManus#62); legacy "(3860 in your prompt; 256 for the completion)" (run-llama/llama_index#948).
  [
    /maximum context length is ([\d,]+) tokens[.,]? however,? you requested ([\d,]+) tokens \(([\d,]+) in (?:the messages|your prompt)[,;] (?:([\d,]+) in the functions, (?:and )?)?([\d,]+) (?:in|for) the completion\)/i,
    (n) => ({ limit: n(1), input: (n(3) ?? 0) + (n(4) ?? 0), output: n(5) }),
  ],
  // OpenRouter: "This endpoint's maximum context length is 131072 tokens. However, you requested about
  // 141607 tokens (10535 of text input, 131072 in the output)." (Aider-AI/aider#3721);
  // "(230395 of text input, 4203 of tool input, 16000 in the output)" (OpenHands/OpenHands#9937).
  [
    /maximum context length is ([\d,]+) tokens\.? however,? you requested about ([\d,]+) tokens \(([\d,]+) of text input, (?:([\d,]+) of tool input, )?([\d,]+) in the output\)/i,
    (n) => ({ limit: n(1), input: (n(3) ?? 0) + (n(4) ?? 0), output: n(5) }),
  ],
  // OpenAI, Azure (code context_length_exceeded): "This model's maximum context length is 128000 tokens.
  // However, your messages resulted in 204308 tokens." (webtimemachine/wtm2#579, assafelovic/
  // gpt-researcher#680); vLLM: "… However, your request has 40000 input tokens." and, without max_tokens,
  // "… However, you requested 5000 tokens in the messages, Please reduce …" (vllm serving_engine.py).
  [
    /maximum context length is ([\d,]+) tokens\.? however,? (?:your messages resulted in|your request has|you requested) ([\d,]+)(?= tokens\.| input tokens| tokens in the messages)/i,
    limitInput,
  ],
  // Anthropic: "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease
  // input length or `max_tokens` and try again" (docker/docker-agent#569, anthropics/claude-code#228).
  [
    /input length and `?max_tokens`? exceed context limit: ([\d,]+) \+ ([\d,]+) > ([\d,]+)/i,
    (n) => ({ input: n(1), output: n(2), limit: n(3) }),
  ],
  // Anthropic, also as a Bedrock ValidationException: "prompt is too long: 208000 tokens > 200000
  // maximum" (earendil-works/pi#102, daisuke-awaji/moca#254).
  [/prompt is too long: ([\d,]+) tokens > ([\d,]+) maximum/i, inputLimit],
  // Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
  // (google-gemini/gemini-cli#6678)
  [
    /input token count \(?([\d,]+)\)? exceeds the maximum number of tokens allowed \(?([\d,]+)\)?/i,
    inputLimit,
  ],
  // Mistral: "Prompt contains 40687 tokens and 0 draft tokens, too large for model with 32768 maximum
  // context length" (Mistral docs "known limitations", quoted in provider test suites).
  [
    /prompt contains ([\d,]+) tokens.{0,60}?too large for model with ([\d,]+) maximum context length/i,
    inputLimit,
  ],
  // Bedrock: "Too many input tokens. Max input tokens: 8192, request input token count: 9279".
  [/max input tokens: ([\d,]+), request input token count: ([\d,]+)/i, limitInput],
  // xAI: "This model's maximum prompt length is 131072 but the request contains 149617 tokens."
  [/maximum prompt length is ([\d,]+) but the request contains ([\d,]+) tokens/i, limitInput],
  // OpenAI: "max_tokens is too large: 6000. This model supports at most 4096 completion tokens"
  // (diffbot/code-gpt-docs#284): the output ceiling, not the window, so no limitTokens.
  [
    /max_tokens is too large: ([\d,]+)\.? this model supports at most/i,
    (n) => ({ output: n(1), part: 'output' }),
  ],
  // vLLM, no max_tokens sent and window − prompt < 1: "max_tokens must be at least 1, got -160"
  // (vllm-project/vllm#5700): the prompt alone fills the window.
  [/max_tokens must be at least 1, got -?[\d,]+/i, () => ({ part: 'input' })],
  // DeepSeek, OpenRouter without a breakdown: "… maximum context length is 200000 tokens. However, you
  // requested about 250000 tokens".
  [/maximum context length is ([\d,]+) tokens/i, (n) => ({ limit: n(1) })],
  // Bedrock "Input is too long for requested model." (aws-samples/bedrock-chat#95), "too many input
  // tokens"; Ollama "the input length exceeds the context length" and "prompt too long; exceeded max
  // context length by 4 tokens" (quoted in openclaw's tests); OpenAI Responses "Your input exceeds the
  // context window of this model"; Azure "Please reduce the length of the messages or completion".
  [
    /input is too long for requested model|too many input tokens|input length exceeds the context length|prompt too long; exceeded (max )?context length|input exceeds the context window|context_length_exceeded|context_window_exceeded|reduce the length of the messages/i,
    () => ({}),
  ],
];

/** The numbers of the first overflow text found in `text`, or undefined when it is not an overflow. */
export function readContextOverflow(text: string): ContextOverflowNumbers | undefined {
  for (const [pattern, read] of OVERFLOW_RULES) {
    const match = pattern.exec(text);
    if (match) return read((i) => toNumber(match[i]));
  }
  return undefined;
}

function toNumber(text: string | undefined): number | undefined {
  const value = text === undefined ? Number.NaN : Number(text.replaceAll(',', ''));
  return Number.isFinite(value) ? value : undefined;
}
