/** The probe conversations `check-template` renders (docs/loss-mask-rules.md "One target", "Trainable span"), in order, with their names. */
import type { Message } from '../types';

/** Names of the probe conversations, in the order they are rendered. */
export type ProbeName = 'single_turn' | 'multi_turn' | 'tool_call' | 'reasoning' | 'agent_reasoning' | 'trailing_tool_result';

const WEATHER_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get the current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] },
    },
  },
];
const weatherCall = { id: 'call_0', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } };

/** The probe conversations (OpenAI message shape, tool-call arguments as JSON strings). */
export const PROBES: { name: ProbeName; title: string; messages: Message[]; tools?: unknown[] }[] = [
  {
    name: 'single_turn',
    title: 'one user question, one answer, no system message',
    messages: [
      { role: 'user', content: 'What is the capital of France?' },
      { role: 'assistant', content: 'Paris.' },
    ],
  },
  {
    name: 'multi_turn',
    title: 'system message and two user/assistant turns',
    messages: [
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
      { role: 'user', content: 'And of Spain?' },
      { role: 'assistant', content: 'Madrid.' },
    ],
  },
  {
    name: 'tool_call',
    title: 'tools list; a tool call, its result, then the final answer',
    tools: WEATHER_TOOLS,
    messages: [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [weatherCall] },
      { role: 'tool', tool_call_id: 'call_0', content: '{"temp_c": 4}' },
      { role: 'assistant', content: 'It is 4 °C in Oslo.' },
    ],
  },
  {
    name: 'reasoning',
    title: 'reasoning_content in two assistant turns',
    messages: [
      { role: 'user', content: '2+2?' },
      { role: 'assistant', reasoning_content: 'Add two and two.', content: '4' },
      { role: 'user', content: 'Times 3?' },
      { role: 'assistant', reasoning_content: 'Four times three is twelve.', content: '12' },
    ],
  },
  {
    // An agent step: templates that keep reasoning only after the last final answer (Kimi-K2-Thinking) rewrite the tool-call turn once the answer follows.
    name: 'agent_reasoning',
    title: 'reasoning in a tool-call turn, its result, then a final answer with reasoning',
    tools: WEATHER_TOOLS,
    messages: [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', reasoning_content: 'Call the weather tool.', content: null, tool_calls: [weatherCall] },
      { role: 'tool', tool_call_id: 'call_0', content: '{"temp_c": 4}' },
      { role: 'assistant', reasoning_content: 'The tool says 4.', content: 'It is 4 °C in Oslo.' },
    ],
  },
  {
    name: 'trailing_tool_result',
    title: 'ends with a tool result (belongs to no record)',
    tools: WEATHER_TOOLS,
    messages: [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [weatherCall] },
      { role: 'tool', tool_call_id: 'call_0', content: '{"temp_c": 4}' },
    ],
  },
];
