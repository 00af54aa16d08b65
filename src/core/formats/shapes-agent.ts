/**
 * Shape handlers for agent trajectories: SWE-agent `.traj` files, OpenHands
 * event streams, and role-less step lists (`thought`/`action`/`observation`).
 *
 * Sources of the field names:
 * - SWE-agent trajectories (swe-agent.com, "Trajectories"): a `.traj` JSON object
 *   with `history` (the messages the model saw: `role`, `content`, `agent`,
 *   `message_type`, `thought`, `action`, `tool_calls`, `tool_call_ids`),
 *   `trajectory` (steps: `thought`, `action`, `observation`, `response`,
 *   `state`, `query`) and `info`.
 * - OpenHands events (docs.all-hands.dev, event stream / trajectory export):
 *   `{id, source: user|agent|environment, action|observation, args, message,
 *   content, tool_call_metadata: {function_name, tool_call_id}}`.
 *
 * Tool output keeps the role the source gave it: SWE-agent observations are
 * `user` turns in `history` (that is what the model was sent); role-less step
 * observations become `user` turns for the same reason.
 */
import type { Message, ToolCall } from '../types';
import { convertTurns } from './common';
import { drop, errored, fieldValue, isObject, isTurnError, nonEmptyString, type Row, type ShapeHandler } from './base';
import { finish } from './rowEnd';
import { toText } from './content';
import { rolesOf } from './shapes-chat';

const STEP_KEYS = ['thought', 'action', 'observation', 'response'];
/** Fields holding the task of a role-less step list, in priority order. */
const TASK_KEYS = ['problem_statement', 'task', 'instruction', 'question', 'query', 'prompt', 'input', 'goal', 'issue'];

function isStep(t: unknown): t is Row {
  return isObject(t) && !('role' in t) && !('from' in t) && STEP_KEYS.some((k) => k in t);
}

/** SWE-agent `.traj`: `history` of role/content messages plus `trajectory` steps or `info`. */
export const sweAgentTrajHandler: ShapeHandler = {
  name: 'swe-agent-traj',
  matches: (row) =>
    Array.isArray(row.history) &&
    row.history.some((t) => isObject(t) && 'role' in t && ('agent' in t || 'message_type' in t)) &&
    (Array.isArray(row.trajectory) || isObject(row.info)),
  describe: (row) =>
    `SWE-agent trajectory: "history" of {role, content, agent, message_type} (${(row.history as unknown[]).length} messages)` +
    (Array.isArray(row.trajectory) ? ` + "trajectory" of ${(row.trajectory as unknown[]).length} steps {thought, action, observation}` : ''),
  roles: (row) => rolesOf(row.history as unknown[]),
  normalize(row, ctx) {
    const list = row.history as unknown[];
    // `trajectory` steps and `info` repeat what `history` holds (the parsed thought / action / observation, the run's outcome).
    ctx.fields.use(row, 'history', 'trajectory', 'info', 'environment', 'replay_config');
    if (!list.length) return drop(ctx.source, 'empty_conversation', '"history" is an empty list');
    ctx.note('swe_agent_history_used', 'SWE-agent "history" (the messages the model saw) used; observations stay in the role they were sent with');
    // A history turn's `thought` / `action` are parsed out of its `content` (SWE-agent's own parser): read through the content.
    const messages = convertTurns(list, ctx, { label: 'history[]', derived: ['thought', 'action', 'agent', 'message_type'] });
    if (isTurnError(messages)) return errored(ctx, messages.code, `"history": ${messages.message}`);
    return finish(row, messages, ctx);
  },
};

function stepField(row: Row): string | undefined {
  return ['trajectory_steps', 'trajectory', 'steps'].find((f) => {
    const v = fieldValue(row, f);
    return Array.isArray(v) && v.length > 0 && v.every(isStep);
  });
}

/**
 * Role-less step lists (`trajectory_steps` / `trajectory` / `steps` of
 * `{thought, action, observation, response}`): the task (first of
 * `problem_statement`, `task`, `instruction`, `question`, `query`, `prompt`,
 * `input`, `goal`, `issue`) is the user turn; each step is an assistant turn
 * (its `response` when present — the model's raw output —, else `thought` and
 * `action` joined by a blank line) followed by its `observation` as a user turn.
 */
export const trajectoryStepsHandler: ShapeHandler = {
  name: 'trajectory-steps',
  matches: (row) => stepField(row) !== undefined,
  describe(row) {
    const f = stepField(row)!;
    const steps = fieldValue(row, f) as Row[];
    const keys = STEP_KEYS.filter((k) => steps.some((s) => k in s));
    return `"${f}": list of role-less steps {${keys.join(', ')}}`;
  },
  roles: () => [],
  normalize(row, ctx) {
    const f = stepField(row)!;
    const steps = fieldValue(row, f) as Row[];
    const messages: Message[] = [];
    const task = TASK_KEYS.find((k) => nonEmptyString(row[k]));
    ctx.fields.use(row, f);
    if (task) ctx.fields.use(row, task);
    for (const s of steps) {
      ctx.fields.track(s, `${f}[].`);
      // A step's `response` is the model's raw output: its `thought` and `action` are parsed out of it.
      ctx.fields.use(s, ...STEP_KEYS);
    }
    if (task) messages.push({ role: 'user', content: row[task] as string });
    else ctx.note('no_task_prompt', 'no task field found: the conversation starts with the first step');
    for (const s of steps) {
      const response = nonEmptyString(s.response) ? s.response : [s.thought, s.action].filter(nonEmptyString).join('\n\n');
      messages.push({ role: 'assistant', content: response });
      if (s.observation !== undefined && s.observation !== null && toText(s.observation, ctx) !== '') {
        messages.push({ role: 'user', content: toText(s.observation, ctx) });
      }
    }
    ctx.note(
      'steps_to_turns',
      `role-less steps → assistant turns (response, else thought + action); observations → user turns${task ? `; "${task}" is the first user turn` : ''}`,
    );
    return finish(row, messages, ctx);
  },
};

// ------------------------------------------------------------------ OpenHands events

const EVENT_FIELDS = ['history', 'events', 'trajectory'];
/** Bookkeeping events that are not part of what the model saw. */
const SKIPPED_ACTIONS = new Set(['change_agent_state', 'recall', 'null', 'condensation', 'condensation_request']);
const SKIPPED_OBSERVATIONS = new Set(['agent_state_changed', 'recall', 'null', 'user_rejected']);

function isEvent(t: unknown): t is Row {
  return isObject(t) && typeof t.source === 'string' && (typeof t.action === 'string' || typeof t.observation === 'string') && !('role' in t);
}

function eventField(row: Row): string | undefined {
  return EVENT_FIELDS.find((f) => {
    const v = fieldValue(row, f);
    return Array.isArray(v) && v.length > 0 && v.some(isEvent);
  });
}

/**
 * OpenHands event streams (events are not field-tracked one by one: besides the
 * fields read here they carry OpenHands bookkeeping — `id`, `timestamp`,
 * `cause`, `extras`, `llm_metrics`, an action's `message` summary of its args):
 * `message` actions become user / assistant turns by
 * `source`; the `system` action is the system message (and its `args.tools`
 * the tools); other agent actions become assistant tool calls (name =
 * `tool_call_metadata.function_name` or the action, arguments = `args` without
 * `thought`; content = `args.thought`); observations become `tool` turns
 * (`tool_call_id` from `tool_call_metadata`). State-change and recall events
 * are skipped (noted).
 */
export const openHandsEventsHandler: ShapeHandler = {
  name: 'openhands-events',
  matches: (row) => eventField(row) !== undefined,
  describe: (row) => `"${eventField(row)}": OpenHands events {source, action|observation, args, content}`,
  roles: (row) => [...new Set((fieldValue(row, eventField(row)!) as unknown[]).filter(isEvent).map((e) => String(e.source)))],
  normalize(row, ctx) {
    const field = eventField(row)!;
    ctx.fields.use(row, field);
    const events = (fieldValue(row, field) as unknown[]).filter(isEvent);
    const messages: Message[] = [];
    let tools: unknown;
    let n = 0;
    for (const e of events) {
      const args = isObject(e.args) ? e.args : {};
      const meta = isObject(e.tool_call_metadata) ? e.tool_call_metadata : {};
      if (typeof e.action === 'string') {
        if (SKIPPED_ACTIONS.has(e.action)) {
          n++;
          continue;
        }
        const text = nonEmptyString(args.content) ? args.content : typeof e.message === 'string' ? e.message : '';
        if (e.action === 'system') {
          messages.push({ role: 'system', content: text });
          if (Array.isArray(args.tools)) tools = args.tools;
        } else if (e.action === 'message') {
          messages.push({ role: e.source === 'user' ? 'user' : 'assistant', content: text });
        } else if (e.source === 'user') {
          messages.push({ role: 'user', content: text });
        } else {
          const { thought, ...rest } = args;
          const call: ToolCall = {
            type: 'function',
            function: { name: typeof meta.function_name === 'string' ? meta.function_name : e.action, arguments: rest },
          };
          if (typeof meta.tool_call_id === 'string') call.id = meta.tool_call_id;
          messages.push({ role: 'assistant', content: nonEmptyString(thought) ? thought : null, tool_calls: [call] });
        }
      } else {
        if (SKIPPED_OBSERVATIONS.has(e.observation as string)) {
          n++;
          continue;
        }
        const m: Message = { role: 'tool', content: typeof e.content === 'string' ? e.content : toText(e.content ?? e.message ?? '', ctx) };
        if (typeof meta.tool_call_id === 'string') m.tool_call_id = meta.tool_call_id;
        messages.push(m);
      }
    }
    if (n) ctx.note('bookkeeping_events_skipped', 'OpenHands state-change / recall events skipped (not part of what the model saw)');
    ctx.note('openhands_events_converted', 'OpenHands events: message actions → user/assistant turns, other actions → tool calls, observations → tool turns');
    if (!messages.length) return drop(ctx.source, 'empty_conversation', 'no message, action or observation event');
    return finish(row, messages, ctx, tools !== undefined && row.tools === undefined ? { tools } : {});
  },
};

// ------------------------------------------------------------------ ATIF

function isAtifStep(t: unknown): t is Row {
  return isObject(t) && typeof t.source === 'string' && ('message' in t || 'tool_calls' in t) && !('role' in t) && !('action' in t);
}

/**
 * Agent Trajectory Interchange Format (ATIF, Harbor RFC 0001): `steps` of
 * `{source: system|user|agent, message, reasoning_content?, tool_calls?:
 * [{tool_call_id, function_name, arguments}], observation?: {results:
 * [{source_call_id, content}]}}`. Agent steps become assistant turns (tool
 * calls included) followed by one `tool` turn per observation result.
 */
export const atifHandler: ShapeHandler = {
  name: 'atif-trajectory',
  matches: (row) => Array.isArray(row.steps) && row.steps.length > 0 && row.steps.every(isAtifStep),
  describe: (row) =>
    `"steps": ATIF steps {source, message, tool_calls, observation}${typeof row.schema_version === 'string' ? ` (${row.schema_version})` : ''}`,
  roles: (row) => [...new Set((row.steps as Row[]).map((s) => String(s.source)))],
  normalize(row, ctx) {
    const messages: Message[] = [];
    ctx.fields.use(row, 'steps', 'schema_version', 'agent', 'final_metrics');
    for (const [i, s] of (row.steps as Row[]).entries()) {
      ctx.fields.track(s, 'steps[].');
      ctx.fields.use(s, 'source', 'message', 'reasoning_content', 'tool_calls', 'observation');
      const text = typeof s.message === 'string' ? s.message : toText(s.message, ctx);
      if (s.source === 'system') messages.push({ role: 'system', content: text });
      else if (s.source === 'user') messages.push({ role: 'user', content: text });
      else if (s.source === 'agent') {
        const calls: ToolCall[] = [];
        for (const c of Array.isArray(s.tool_calls) ? s.tool_calls : []) {
          if (!isObject(c) || typeof c.function_name !== 'string') return errored(ctx, 'bad_tool_calls', `step ${i + 1}: a tool call has no "function_name"`);
          const args = c.arguments;
          const call: ToolCall = {
            type: 'function',
            function: { name: c.function_name, arguments: isObject(args) || typeof args === 'string' ? (args as string | Record<string, unknown>) : {} },
          };
          if (typeof c.tool_call_id === 'string') call.id = c.tool_call_id;
          calls.push(call);
        }
        const m: Message = { role: 'assistant', content: text === '' && calls.length ? null : text };
        if (nonEmptyString(s.reasoning_content)) m.reasoning_content = s.reasoning_content;
        if (calls.length) m.tool_calls = calls;
        messages.push(m);
      } else {
        return errored(ctx, 'unknown_role', `step ${i + 1}: unknown ATIF source "${String(s.source)}" (known: system, user, agent)`);
      }
      const results = isObject(s.observation) && Array.isArray(s.observation.results) ? s.observation.results : [];
      for (const r of results) {
        if (!isObject(r)) continue;
        const t: Message = { role: 'tool', content: toText(r.content ?? '', ctx) };
        if (typeof r.source_call_id === 'string') t.tool_call_id = r.source_call_id;
        messages.push(t);
      }
    }
    ctx.note('atif_steps_converted', 'ATIF steps: agent steps → assistant turns with tool calls, observation results → tool turns');
    return finish(row, messages, ctx);
  },
};
