import { LlamaText, SpecialTokensText, type ChatWrapper, type ChatWrapperGeneratedContextState, type LlamaModel } from 'node-llama-cpp';

/**
 * The model's own start-of-call token (Qwen's and Hermes's `<tool_call>`) as the start of a call
 * when an answer begins with it. node-llama-cpp otherwise waits for the whole call prefix
 * (`<tool_call>\n{"name": "`) before it constrains the call, so a model that writes the token and
 * then strays never calls; llama.cpp's server starts its call grammar at that token the same way.
 * A prefix that does not begin with a token of the model's own (a control or added token, not
 * plain text) is left alone: it would fire on ordinary text.
 */
export function withCallTrigger(chatWrapper: ChatWrapper, model: LlamaModel): ChatWrapper {
  const prefix = chatWrapper.settings.functions.call.prefix;
  const first = LlamaText(prefix).tokenize(model.tokenizer)[0];
  const attributes = first === undefined ? null : model.getTokenAttributes(first);
  if (first === undefined || !(attributes?.control || attributes?.userDefined)) return chatWrapper;
  const trigger = LlamaText(new SpecialTokensText(model.detokenize([first], true)));
  const generateContextState = chatWrapper.generateContextState.bind(chatWrapper);
  chatWrapper.generateContextState = (options): ChatWrapperGeneratedContextState => {
    const state = generateContextState(options);
    if ('prefixTriggers' in state && (state.prefixTriggers || state.noPrefixTrigger)) return state;
    if ('functionCall' in state && state.functionCall) return state;
    return { ...state, prefixTriggers: [{ type: 'functionCall', triggers: [trigger], replaceTrigger: true }] } as ChatWrapperGeneratedContextState;
  };
  return chatWrapper;
}
