/**
 * Every stable code a run writes — drop reasons, error codes and notes — with
 * what it means, what to do about it, and whether it changes the training data
 * (a "data-changing warning": the terminal summary, the report's status and the
 * editor's Problems must show it). One home: the report, the CLI summary, the
 * Datasets view and Problems all read this table. Adding a code: add it here.
 */

/**
 * What a code stands for in a run's accounting: a row's drop reason, error or
 * note, or (`template`) a finding of the chat template check that applies to
 * every record of the shape it was found on.
 */
export type CodeKind = 'drop' | 'error' | 'note' | 'template';

export interface CodeInfo {
  kind: CodeKind;
  /** One line: what happened. */
  meaning: string;
  /** One line: what the user can do, when something can be done. */
  remedy?: string;
  /** true when the written records differ from what the source holds because of it (text lost, turns not trained, records cut). */
  changesData?: boolean;
  /**
   * true for a note that is the expected behaviour of the chosen chat template and its kwargs, on
   * every file alike (the empty think block Qwen3 writes with thinking on): shown once per run as a
   * chat template note with the way to change it, not as a file's WARNINGS status (issue 24).
   */
  settingNote?: boolean;
  /** true when a row it is noted on lacks the text it most likely holds (its longest text unread): the file's status is `degraded`, as for errored rows (`run/reports/status.ts`). */
  degrades?: boolean;
}

const TABLE = {
  message_fragment: {
    kind: 'drop',
    meaning:
      'the row is one message of a file-level shape read on its own: a message of a message tree (OpenAssistant flat export) or an event of an agent CLI event log; a file of such rows is rebuilt into conversations',
    remedy: 'give the whole file to prepare / inspect: its message rows are grouped by message_tree_id, its events joined by parentUuid',
  },
  kto_undesirable: {
    kind: 'drop',
    meaning: 'a KTO row labelled undesirable ("label": false) with no user turn before its completion: nothing to answer; the completion is never trained',
  },
  kto_undesirable_set_aside: {
    kind: 'note',
    meaning:
      'a KTO row labelled undesirable ("label": false): its completion is what the model should not write, never trained; its prompt is set aside in prompts_to_generate.jsonl for the target model to answer',
  },
  oasst_excluded: { kind: 'drop', meaning: 'an OpenAssistant message marked deleted or failing review (or below one that is): not in any conversation' },
  oasst_not_best_path: {
    kind: 'drop',
    meaning: 'an OpenAssistant message off the best-ranked path of its tree ("oasstPaths": "best-ranked")',
    remedy: 'set "oasstPaths": "all" in eagle3prep.jsonc to write one record per root-to-leaf path',
  },
  oasst_orphan: { kind: 'drop', meaning: 'an OpenAssistant message whose parent_id is not in the file: its conversation cannot be rebuilt' },
  oasst_duplicate: { kind: 'drop', meaning: 'an OpenAssistant message whose message_id appeared earlier in the file: the first row is used' },
  oasst_path_not_written: {
    kind: 'drop',
    meaning: 'an OpenAssistant message whose every conversation (root-to-leaf path) was dropped or errored; see the rows of its leaves',
  },
  summary_event: {
    kind: 'drop',
    meaning: 'a summary line of an agent CLI event log ({type: "summary", summary, leafUuid}): a title the CLI wrote for a conversation, not a turn',
  },
  orphan_event: {
    kind: 'drop',
    meaning: 'an event of an agent CLI event log whose parentUuid is not in the file (or below one that is): its conversation cannot be rebuilt',
    remedy: 'give the whole session log (the file holding its earlier events): a log cut in the middle loses the chain above the cut',
  },
  non_conversation_event: {
    kind: 'drop',
    meaning: 'a line of an agent CLI event log with a "type" but neither uuid nor message (the CLI\'s bookkeeping, e.g. file snapshots): not a turn',
  },
  duplicate_event: { kind: 'drop', meaning: 'an event of an agent CLI event log whose uuid appeared earlier in the file: the first line is used' },
  event_chain_not_written: {
    kind: 'drop',
    meaning: 'an event of an agent CLI event log whose every conversation (root-to-leaf chain) was dropped or errored; see the line of its leaf',
  },
  unknown_role: { kind: 'error', meaning: 'a turn role not in the alias table (add it to a field mapping); never trained as assistant' },
  missing_role: { kind: 'error', meaning: 'a turn without a role field' },
  bad_turn: { kind: 'error', meaning: 'a turn that is not an object' },
  bad_tool_calls: { kind: 'error', meaning: 'tool calls that cannot be read (not a list, no function name)' },
  bad_field: { kind: 'error', meaning: 'a field of the wrong type (e.g. "tools" not a list, a JSON string that does not parse)' },
  answers_without_prompt: {
    kind: 'error',
    meaning: 'a batch output line holds answers (response.body.choices, response.candidates) without the request they answer: nothing to train them after',
    remedy: 'join each output line with its request (OpenAI: the batch input line of the same custom_id, as {"custom_id", "body", "response"})',
  },
  internal_error: { kind: 'error', meaning: 'a normalizer bug (please report)' },
  batch_candidates_split: {
    kind: 'note',
    meaning: 'a request logged with several answers (response choices, batch candidates): one record each, the request shared',
  },
  alternating_strings: {
    kind: 'note',
    meaning: 'a list of strings read as alternating user / assistant turns, as its documented layout says (UltraChat "data", LIMA "conversations")',
  },
  speaker_markers_split: {
    kind: 'note',
    meaning: 'a list of strings each opening with a speaker marker (User: …, Assistant: …): the marker gives the role and is removed from the text',
  },
  question_answer_lists: {
    kind: 'note',
    meaning:
      'a questions list and an answers list of the same length side by side: each question a user turn, the answer at its position the assistant turn after it',
  },
  answers_json_string: { kind: 'note', meaning: '"answers" given as a JSON string (parsed into tool calls)' },
  atif_steps_converted: { kind: 'note', meaning: 'ATIF steps converted: agent steps → assistant turns with tool calls, observation results → tool turns' },
  bookkeeping_events_skipped: { kind: 'note', meaning: 'OpenHands state-change / recall events skipped' },
  chosen_is_whole_conversation: { kind: 'note', meaning: 'preference row whose "chosen" holds the whole conversation' },
  consecutive_same_role: { kind: 'note', meaning: 'consecutive turns of the same role kept as they are' },
  content_parts_joined: { kind: 'note', meaning: 'content given as a list of parts; text parts joined with "\\n"' },
  content_stringified: { kind: 'note', meaning: 'a number, boolean or object where text belongs, converted to text', changesData: true },
  empty_response: { kind: 'note', meaning: 'an empty response field: the row is a prompt to answer' },
  field_mapping_used: { kind: 'note', meaning: 'fields read through a field-mapping file' },
  longest_text_not_read: {
    kind: 'note',
    meaning:
      "a field that is not read looks written by a model (long prose or code) and is longer than every turn read from the row: most likely the row's answer, missing from its records",
    remedy:
      'inspect the file: name the field in a field mapping in eagle3prep.jsonc ("mappings") so it is read, or report the shape; the records of these rows lack it',
    changesData: true,
    degrades: true,
  },
  model_text_not_read: {
    kind: 'note',
    meaning:
      'a field that is not read looks written by a model (long prose or code): it may be the answer, its reasoning or its tool calls, which the records then lack or replace',
    remedy:
      'inspect the file: if the field holds what the model wrote, name it in a field mapping in eagle3prep.jsonc ("mappings"), or report the shape; if it is context or a judge\'s text, ignore this warning',
    changesData: true,
  },
  fields_not_read: {
    kind: 'note',
    meaning: 'fields of the row or its turns that are neither read nor known metadata (listed under unread_fields)',
    remedy: 'check the listed fields: if one holds what the model wrote, name it in a field mapping in eagle3prep.jsonc, or report the shape',
    changesData: true,
  },
  text_field_fallback: { kind: 'note', meaning: "a turn's usual text field was empty and another text field held the text (read)" },
  refusal_as_content: { kind: 'note', meaning: 'an assistant turn without content whose text is in "refusal" (OpenAI): the refusal is the content' },
  turn_system_prompt_used: {
    kind: 'note',
    meaning: 'a system turn without text whose prompt is in its own "system_prompt" field (SWE-agent runs) used as its content',
  },
  api_actions_converted: { kind: 'note', meaning: '"actions" [{API_name, API_params}] beside a turn\'s text converted to tool calls' },
  side_tool_calls_read: {
    kind: 'note',
    meaning:
      "a list of tool-call objects beside an assistant turn's text (any field name, recognized by the objects' name and arguments keys) read as the turn's tool calls",
  },
  side_tool_calls_expanded: {
    kind: 'note',
    meaning:
      "a list of tool calls with their results beside an assistant turn's text ({request, response} or {name, arguments, result}): each call an assistant turn followed by a tool turn with its result, the turn's text after them",
  },
  llamafactory_parts_read: {
    kind: 'note',
    meaning: 'LLaMA-Factory v1 content parts read: "text" values joined as written, "reasoning" → reasoning_content, "tool_call" → tool calls',
  },
  fractional_loss_weight: {
    kind: 'note',
    meaning: 'a "loss_weight" between 0 and 1: the turn is trained with weight 1 (a loss mask has no fractional weights)',
    changesData: true,
  },
  context_turns_not_trained: {
    kind: 'note',
    meaning: 'assistant turns inside the prompt part of a prompt/completion or preference row are context, not targets (docs/loss-mask-rules.md "Targets")',
  },
  multi_turn_prompt: {
    kind: 'note',
    meaning:
      'a prompt with several user turns answered in order: generate answers each before asking the next (the record lists them as answer_after; prompts_to_generate.jsonl writes an empty assistant turn after each)',
  },
  conversation_found: { kind: 'note', meaning: 'no known shape: the conversation was found by searching the row (its path and keys are in the evidence)' },
  field_role_assigned: {
    kind: 'note',
    meaning:
      'fields read in the roles eagle3prep.jsonc "fieldRoles" gives them (prompt, answer, reasoning, system); a label or metadata field is never read as text; a field that held the role before is reported unread',
  },
  duplicate_conversation_kept: {
    kind: 'note',
    meaning:
      'with --dedup, a row holding several conversations repeats one written before beside new ones: the row is written whole, the repeat with it (a row whose every conversation was written before is dropped as duplicate)',
    remedy: 'none needed for a few; to drop the repeats, split the rows into one conversation each before the run',
    changesData: true,
  },
  field_role_unmatched: {
    kind: 'note',
    meaning:
      'a field path of eagle3prep.jsonc "fieldRoles" is not in the row (a misspelled path, or a field only some rows have): nothing was read in that role from it',
    remedy: "check the path's spelling against the rows (inspect lists their fields); if only some rows have the field, ignore this",
    changesData: true,
  },
  several_conversations_found: {
    kind: 'note',
    meaning:
      "the row holds several conversations (lists of turns under different fields): each is its own record, ids <row id>/<k> in the row's order, the row written when any of them is",
    remedy: 'to read one of them only, name it in a "mappings" entry of eagle3prep.jsonc ("turns": "<path>")',
  },
  longest_conversation_kept: {
    kind: 'note',
    meaning: 'a list of conversations of which only the longest is read ("conversationLists": "longest")',
    changesData: true,
  },
  turn_lists_one_prompt: {
    kind: 'note',
    meaning:
      'a list of turn lists holding user turns only (BFCL multi-turn "question"): the lists are the successive turns of one multi-turn prompt, answered in order, not separate conversations',
    remedy: 'set "conversationLists": "each" in eagle3prep.jsonc to make one prompt of each list',
  },
  split_part_dropped: { kind: 'note', meaning: 'a row holding several conversations: some had no user or assistant turn and were left out', changesData: true },
  split_part_set_aside: {
    kind: 'note',
    meaning: 'a row holding several conversations wrote a prompt to generate besides its records or its first prompt (counted once per extra prompt line)',
  },
  instances_as_examples: { kind: 'note', meaning: 'Self-Instruct task: each of its "instances" {input, output} is one example (instruction + input → output)' },
  kto_desirable: { kind: 'note', meaning: 'a KTO row labelled desirable ("label": true): its completion is trained' },
  reference_answers_not_used: { kind: 'note', meaning: 'reference answers of a benchmark question (MT-bench "reference") not used: the target model answers' },
  oasst_tree_rebuilt: {
    kind: 'note',
    meaning: 'OpenAssistant message rows grouped by message_tree_id and rebuilt into conversations (one per root-to-leaf path)',
  },
  oasst_shared_turns_trained_once: {
    kind: 'note',
    meaning: 'OpenAssistant paths that share earlier replies: a shared assistant turn is trained in the first path only (context in the others)',
  },
  event_log_rebuilt: {
    kind: 'note',
    meaning: 'agent CLI event log lines joined by parentUuid into conversations (one per root-to-leaf chain; split assistant events merged into one turn)',
  },
  event_log_shared_turns_trained_once: {
    kind: 'note',
    meaning: 'branches of an agent CLI event log that share earlier turns: a shared assistant turn is trained in the first branch only (context in the others)',
  },
  function_call_converted: { kind: 'note', meaning: 'legacy OpenAI "function_call" converted to tool calls' },
  function_call_parts_converted: { kind: 'note', meaning: 'Gemini "functionCall" parts converted to tool calls' },
  function_call_turn_converted: { kind: 'note', meaning: 'LLaMA-Factory "function_call" turns (JSON text) converted to tool calls' },
  glaive_functioncall_converted: { kind: 'note', meaning: 'Glaive "<functioncall>" converted to a tool call (arguments kept as written)' },
  hermes_tool_calls_parsed: { kind: 'note', meaning: 'Hermes <tool_call>{json}</tool_call> blocks in assistant text converted to tool calls' },
  history_pairs_used: { kind: 'note', meaning: 'Alpaca / LLaMA-Factory "history" pairs placed before the current exchange' },
  inline_think_split: {
    kind: 'note',
    meaning: 'inline <think>…</think> (or a lone </think>) split into reasoning_content + content: the chat template renders reasoning_content',
  },
  inline_think_kept: {
    kind: 'note',
    meaning: 'inline <think>…</think> reasoning kept in the content exactly as written: the chat template does not render reasoning_content',
  },
  thought_markers_split: {
    kind: 'note',
    meaning: '<|begin_of_thought|>…<|end_of_thought|> split into reasoning_content; the <|begin_of_solution|> text kept as content',
  },
  instruction_context_joined: { kind: 'note', meaning: 'Dolly "context" joined to the instruction (blank line between)' },
  instruction_input_joined: { kind: 'note', meaning: 'Alpaca "input" joined to the instruction (blank line between)' },
  no_task_prompt: { kind: 'note', meaning: 'a step list without a task field: the conversation starts with the first step' },
  non_text_parts_skipped: {
    kind: 'note',
    meaning: 'content parts that are not text (images, audio, files, or a part type not read as text) not rendered; listed per record by inspect',
    remedy: 'images/audio are not rendered: a text-only drafter trains on the text turns only',
    changesData: true,
  },
  text_part_content_read: { kind: 'note', meaning: 'a text content part with its text under "content" (no "text") read as text' },
  turn_empty_after_skipped_parts: {
    kind: 'note',
    meaning: 'a turn whose every content part was skipped (not text) went out with no text',
    remedy: 'run eagle3-prep inspect to see the parts; map a text part written another way with eagle3prep.jsonc, or leave such rows out',
    changesData: true,
  },
  duplicate_id_across_shards: {
    kind: 'note',
    meaning:
      "merge-reports --data: the record's id was used by a record of another shard (each shard keeps ids unique within itself only), so the merged records repeat it where one unsharded run would have named it <id>~2",
    remedy: 'if your trainer or tooling keys on record ids, run prepare unsharded, or give rows unique ids (an "id" field) before sharding',
    changesData: true,
  },
  duplicate_id_renamed: {
    kind: 'note',
    meaning: 'the row reuses an id used earlier in the run: its records and prompts are named <id>~2, <id>~3, … so ids stay unique',
  },
  null_content: { kind: 'note', meaning: 'null content replaced by ""' },
  oasst_best_path: { kind: 'note', meaning: 'OpenAssistant tree read along its best-ranked replies' },
  openhands_events_converted: { kind: 'note', meaning: 'OpenHands events converted to turns and tool calls' },
  pairs_to_turns: { kind: 'note', meaning: '{input, output} exchanges read as user / assistant turns' },
  question_context_joined: { kind: 'note', meaning: '"context" placed before the question (blank line between)' },
  reasoning_field_used: { kind: 'note', meaning: 'a "reasoning" / "thinking" turn field used as reasoning_content' },
  preferred_answer_used: {
    kind: 'note',
    meaning:
      'several answers to one prompt (answer pair, answers list): the one the row prefers (preference field, best score) is trained, the others not used',
  },
  no_preferred_answer: {
    kind: 'note',
    meaning: 'several different answers to one prompt whose preference or scores pick none (a tie, null): the first one is trained',
    remedy: 'check the rows listed: if another answer should be trained, fix their preference field, or map the answer field in eagle3prep.jsonc',
  },
  first_answer_used: {
    kind: 'note',
    meaning: 'several answers to one prompt: the first is trained ("reading": {"answers": "first"} in eagle3prep.jsonc), the others not used',
  },
  answers_as_records: {
    kind: 'note',
    meaning:
      'several answers to one prompt and no preference or scores (or "reading": {"answers": "all"}): each distinct answer is its own record with the shared prompt',
  },
  chatml_end_removed: {
    kind: 'note',
    meaning: 'a response that follows a rendered ChatML prompt ended with the <|im_end|> marker: removed (the chat template writes the end of the turn)',
  },
  short_label_not_trained: {
    kind: 'note',
    meaning: 'a short label (a ground truth: a number, a letter, an option) beside the model-written answer of the row: read as a label, not trained',
  },
  rejected_not_used: { kind: 'note', meaning: 'preference row: trained on the preferred answer ("chosen", "preferred_output"); the other one not used' },
  row_json_string: { kind: 'note', meaning: 'the row is a JSON string holding the object (decoded)' },
  steps_to_turns: { kind: 'note', meaning: 'role-less steps read as assistant turns with observations as user turns' },
  swe_agent_history_used: { kind: 'note', meaning: 'SWE-agent "history" (the messages the model saw) used' },
  system_field_ignored: { kind: 'note', meaning: 'a top-level system field ignored: the turn list has its own system turn', changesData: true },
  system_prompt_field_used: { kind: 'note', meaning: 'a top-level system field used as the system message' },
  tool_call_arguments_not_json: { kind: 'note', meaning: 'tool-call arguments that are not valid JSON kept verbatim as text' },
  tool_call_content_null: { kind: 'note', meaning: 'assistant tool-call turns without text keep content null' },
  tool_call_text_not_json: { kind: 'note', meaning: 'a tool call written in text that does not parse kept verbatim as assistant text', changesData: true },
  tool_result_blocks_as_tool_turns: { kind: 'note', meaning: 'tool results inside content (Anthropic tool_result, Gemini functionResponse) became tool turns' },
  tool_use_blocks_converted: { kind: 'note', meaning: 'Anthropic "tool_use" blocks converted to tool calls' },
  tools_json_string: { kind: 'note', meaning: '"tools" given as a JSON string (parsed)' },
  transcript_preamble_as_system: { kind: 'note', meaning: 'text before the first speaker marker used as the system message' },
  transcript_split: { kind: 'note', meaning: 'one string split into turns at its speaker markers' },
  turns_json_string: { kind: 'note', meaning: 'the turn list given as a JSON string (parsed)' },
  untrainable_turn: { kind: 'note', meaning: 'turns flagged not trainable by the source (weight: 0, loss: false, train: false, trainable: false)' },
  no_trainable_tokens: { kind: 'drop', meaning: 'no token left to train on (no assistant turn with content, all flagged not trainable, or truncated away)' },
  too_long: {
    kind: 'drop',
    meaning: 'longer than --max-length',
    remedy:
      '--long split keeps every assistant turn in records that fit (recent history kept); --long truncate keeps the first tokens; problems.jsonl says by how much each row is over',
  },
  too_few_trainable_tokens: { kind: 'drop', meaning: 'every record had fewer trainable tokens than --min-trainable-tokens' },
  low_trainable_share: {
    kind: 'drop',
    meaning: "every record's trainable tokens were a smaller share of its tokens than --min-trainable-share",
    remedy: 'lower --min-trainable-share (eagle3prep.minTrainableShare), or 0 to keep every record; --long split makes shorter records of long conversations',
  },
  empty_conversation: { kind: 'drop', meaning: 'the row holds a conversation with no messages' },
  no_assistant_turn: { kind: 'drop', meaning: 'no assistant turn' },
  unrecognized_shape: { kind: 'drop', meaning: 'no conversation recognized in the row' },
  invalid_json: { kind: 'drop', meaning: 'the line is not valid JSON' },
  duplicate: {
    kind: 'drop',
    meaning: 'the same conversation as an earlier row of the run (identical after normalization); written once (--dedup)',
    changesData: false,
  },
  empty_think_trained: {
    kind: 'note',
    meaning: 'an assistant turn without reasoning is trained with the empty think block the template writes for it',
    remedy:
      'right if the data was generated with thinking on; if it was generated with thinking off, pass --template-kwargs \'{"enable_thinking": false}\' (the empty block then becomes prompt)',
    changesData: false,
    settingNote: true,
  },
  span_without_special_token: {
    kind: 'template',
    meaning: 'the chat template ends an assistant turn without a special token: the drafter never learns where a turn ends',
    remedy: "run eagle3-prep check-template to see the renders; use the model's own tokenizer_config.json / chat_template.jinja",
    changesData: true,
  },
  template_error: {
    kind: 'template',
    // Also the error code of a row whose render raised (problems.jsonl, the dashboard): the same cause, seen on a row.
    meaning: 'the chat template raised while rendering (a row, or a probe conversation of the check: rows of that shape are errored)',
    remedy: 'run eagle3-prep check-template to see which shape; check --template-kwargs and the template',
    changesData: true,
  },
  probe_render_failed: { kind: 'template', meaning: 'a render needed for a template-wide finding raised (the finding is unknown)' },
  template_rewrites_history: { kind: 'note', meaning: 'the chat template rewrites earlier turns when a turn is added (records split per stable run)' },
  generation_prompt_mismatch: { kind: 'note', meaning: 'the template writes no generation-prompt header for some turns (completion taken after the history)' },
  template_unsupported: {
    kind: 'error',
    meaning: 'a target turn could not be located in the render',
    remedy: 'run eagle3-prep check-template to see the probe renders; report the template',
    changesData: true,
  },
  reasoning_not_rendered: {
    kind: 'note',
    meaning: 'reasoning_content the template does not render (check template kwargs)',
    remedy:
      'the template does not write this reasoning: check template kwargs (enable_thinking, preserve_thinking) or pass --reasoning drop to train without it',
    changesData: true,
  },
  tool_calls_not_rendered: {
    kind: 'error',
    meaning:
      "an assistant turn's tool calls the chat template does not write (none of their names or ids in the rendered turn): trained, it would teach the model to end the turn (or stop) where it calls a tool, so the turn is not trained; the row's other turns are written, with it as history",
    remedy:
      "the template has no tool-call support for this shape: use the target model's tool-use template (tokenizer_config.json chat_template list, or its chat_template.jinja) or check the tool_calls fields",
    changesData: true,
  },
  generation_blocks_disagree: {
    kind: 'note',
    meaning:
      "the chat template's {% generation %} blocks mark other text than the rules train (e.g. the turn's header inside a block, or its end-of-turn token outside): the records follow the rules, which train what the model writes, not the blocks",
    remedy:
      "run eagle3-prep check-template to see the first difference; a training template's blocks are a claim, prefer the model's own (inference) chat template, which the server renders",
    changesData: true,
  },
  content_not_rendered: {
    kind: 'note',
    meaning:
      "an assistant turn's text is not in its rendered completion: the chat template dropped or rewrote it (e.g. text beside tool calls, or text it splits at a </think> tag), so the record trains something else than the source turn",
    remedy:
      "run eagle3-prep check-template and inspect the record: if the model writes such text, use the model's own template (or its tool-use template); otherwise fix or filter these rows",
    changesData: true,
  },
  stop_token_inside_turn: {
    kind: 'note',
    meaning:
      'a trained turn spells out one of the model\'s stop tokens or its own end-of-turn token (e.g. "<|im_end|>") before its end: the tokenizer reads it as that token (as the server does), and the model stops there and never writes the rest',
    remedy:
      'rewrite the text so it does not spell the token (e.g. "< |im_end| >"), or filter these rows; the records are written as the server would tokenize them',
    changesData: true,
  },
  prompt_not_renderable: {
    kind: 'error',
    meaning:
      "an assistant turn whose prompt the chat template cannot render (it raises on the conversation before the turn, e.g. a greeting before any user turn): no server prompt leads to it, so it is not trained; the row's other turns are written, with it as history",
    remedy: 'nothing to do for a scripted greeting (it stays context of later turns); otherwise start the conversation with a user turn',
    changesData: true,
  },
  record_dropped_too_long: {
    kind: 'note',
    meaning: 'a record of a written row was longer than --max-length and dropped',
    remedy: 'raise --max-length, or use --truncate',
    changesData: true,
  },
  trainer_length_cut: {
    kind: 'note',
    meaning:
      'a written record longer than a trainer\'s default length: SpecForge (data.max_length 2048), speculators (--seq-length 8192) and Model-Optimizer (training.training_seq_len 2048) train only its first tokens, EAGLE (max_len 2048) leaves it out; the trainable tokens past the length are never trained (per trainer in the summary and report.md, "Trainer lengths")',
    remedy:
      "prepare with --trainer specforge|speculators|eagle|modelopt (that trainer's default length with --long split; add --max-length N when the trainer's length is set to N), or with --max-length N --long split and set the trainer's length to N",
    changesData: true,
  },
  conversation_over_trainer_length: {
    kind: 'note',
    meaning:
      "--format messages: a written conversation, rendered once with the chat template, has more tokens than --max-length (without it: 2048, the default length of EAGLE's max_len and Model-Optimizer's training_seq_len); a trainer that tokenizes conversations itself applies its length to the whole conversation (Model-Optimizer trains only its first tokens, EAGLE leaves it out), whatever records the run made of it",
    remedy:
      "set the trainer's length (training.training_seq_len, max_len) to at least the longest conversation (report.md lengths), or write records (--format jsonl) for a trainer that reads them (SpecForge, speculators): --long split fits every turn there",
    changesData: true,
  },
  conversation_turn_not_trainable: {
    kind: 'note',
    meaning:
      '--format messages: the conversation has an assistant turn the data marks not trainable (weight 0, train false, …) or the rules leave untrained (tool_calls_not_rendered, --mask last, …: no written record trains it); conversations.jsonl keeps it with "weight": 0, which Model-Optimizer and EAGLE ignore: they train every assistant turn',
    remedy: 'write records (--format jsonl), whose loss_mask leaves the turn out, or remove such turns from the data',
    changesData: true,
  },
  eagle_system_prompt: {
    kind: 'note',
    meaning:
      "--format messages --trainer eagle: the conversation starts with a system turn, which EAGLE's traineagle3 main.py cannot read (it knows only human/gpt and puts its own fixed system prompt first): conversations_sharegpt.jsonl has the conversation without it, so EAGLE trains its answers after its own system prompt, not the one they were written for (conversations.jsonl keeps it)",
    remedy:
      "train with Model-Optimizer (it reads conversations.jsonl with its system turns), or edit the system prompt in main.py's build_dataset_rank to the data's",
    changesData: true,
  },
  eagle_tool_turns: {
    kind: 'note',
    meaning:
      "--format messages --trainer eagle: the conversation has tool calls, tool results or tool definitions, which ShareGPT human/gpt turns cannot hold (EAGLE's main.py reads no other role): in conversations.jsonl, not in conversations_sharegpt.jsonl",
    remedy: 'train with a trainer that renders tool turns with the chat template: Model-Optimizer (conversations.jsonl), SpecForge or speculators (records)',
    changesData: true,
  },
  eagle_reasoning: {
    kind: 'note',
    meaning:
      "--format messages --trainer eagle: an assistant turn has reasoning, which a ShareGPT gpt turn cannot hold apart from the answer (EAGLE's main.py passes role and content only): in conversations.jsonl, not in conversations_sharegpt.jsonl",
    remedy:
      'prepare with --reasoning drop to train EAGLE on the answers alone, or train with a trainer that renders reasoning (Model-Optimizer, SpecForge, speculators)',
    changesData: true,
  },
  eagle_turn_order: {
    kind: 'note',
    meaning:
      "--format messages --trainer eagle: the turns do not alternate user, assistant, user, … starting with a user turn, as EAGLE's main.py requires (it drops a first turn that is not human and stops on any other order): in conversations.jsonl, not in conversations_sharegpt.jsonl",
    remedy: 'train with Model-Optimizer (conversations.jsonl) or with records (SpecForge, speculators)',
    changesData: true,
  },
  eagle_turn_not_trainable: {
    kind: 'note',
    meaning:
      '--format messages --trainer eagle: an assistant turn the data marks not trainable; EAGLE\'s main.py trains every gpt turn: in conversations.jsonl (with "weight": 0), not in conversations_sharegpt.jsonl',
    remedy: 'train with records (SpecForge, speculators), whose loss_mask leaves the turn out',
    changesData: true,
  },
  record_truncated: {
    kind: 'note',
    meaning: 'a record longer than --max-length was cut to its first --max-length tokens (--truncate)',
    remedy: 'raise --max-length if the cut turns matter',
    changesData: true,
  },
  generated_token_ids_used: { kind: 'note', meaning: 'the token ids the server generated were used for the trained turns (generate wrote them)' },
  retokenized_no_token_ids: { kind: 'note', meaning: 'generated row without token ids: re-tokenized from the text' },
  retokenized_spans_not_per_turn: { kind: 'note', meaning: 'generated token ids could not be matched turn by turn: re-tokenized from the text' },
  retokenized_token_boundary: { kind: 'note', meaning: 'generated token ids do not start at a token boundary of the render: re-tokenized from the text' },
  retokenized_text_differs: {
    kind: 'note',
    meaning: 'the render differs from the generated text (e.g. the template re-renders reasoning): re-tokenized from the text',
  },
  record_dropped_few_trainable_tokens: {
    kind: 'note',
    meaning: 'a record of a written row had fewer trainable tokens than --min-trainable-tokens and was dropped',
    changesData: true,
  },
  record_dropped_low_trainable_share: {
    kind: 'note',
    meaning: 'a record of a written row had a smaller share of trainable tokens than --min-trainable-share and was dropped',
    remedy: 'lower --min-trainable-share (eagle3prep.minTrainableShare) to keep such records',
    changesData: true,
  },
  context_window_cut: {
    kind: 'note',
    meaning:
      'a record of --long split: the conversation rendered with its system and first user turns and the most recent history that fits --max-length; earlier turns left out',
    changesData: true,
  },
  target_too_long: {
    kind: 'note',
    meaning: 'an assistant turn that does not fit --max-length even with no history (--long split); not written',
    remedy: 'raise --max-length, or use --long truncate to keep the first tokens',
    changesData: true,
  },
  merged_history_form: {
    kind: 'note',
    meaning:
      'grouping merged: a turn is trained in the form the template gives it once later turns follow (e.g. without an earlier think block), which differs from its exact completion',
    remedy: 'use --grouping exact to train every turn exactly as the model writes it (costs one record per turn on this template)',
    changesData: true,
  },
  merged_fallback_exact: {
    kind: 'note',
    meaning:
      'grouping merged: a turn could not be placed safely in the conversation rendered once (the template rewrites its history); the conversation was written with exact grouping',
  },
  record_dropped_no_trainable_tokens: { kind: 'note', meaning: 'a record of a written row kept no trainable token after truncation', changesData: true },
  offsets_approximate: {
    kind: 'note',
    meaning: 'token offsets could not be aligned exactly to the text',
    remedy: 'the tokenizer normalizer changes text: masks at token edges may be off by a token',
    changesData: true,
  },
  unicode_tables_unverified: {
    kind: 'note',
    meaning:
      "a text holds a character whose Unicode properties this runtime's tables give otherwise than the Rust tokenizers' (a character new in one of the two Unicode versions), and the tokenizer's pre-tokenizer pattern uses a property eagle3-prep cannot pin to Rust's tables (a script such as \\p{Han}, a binary property): its ids may differ from the model's tokenizer's",
    remedy: "run with --tokenizer-backend rust (the Rust tokenizers binding: the ids of the model's tokenizer), or check those rows",
    changesData: true,
  },
  prefill_not_rendered: {
    kind: 'note',
    meaning:
      'the generation prompt pre-fills text (e.g. "<think>\\n") that the template does not write into a finished turn: the turn is trained from where it leaves the prompt',
  },
  reasoning_restored: {
    kind: 'note',
    meaning:
      "the turn's reasoning was put back where the model writes it (after a pre-filled reasoning opener, or into the empty reasoning block the template writes): later turns start a new record",
  },
  reasoning_missing_after_prefill: {
    kind: 'note',
    meaning: 'the generation prompt opens a reasoning block but the turn has no reasoning: the record trains the answer right after the opener',
    remedy: 'the data was not written by this model in thinking mode: regenerate it, or pass the template kwargs that turn thinking off',
    changesData: true,
  },
  reasoning_with_thinking_off: {
    kind: 'error',
    meaning: 'a turn has reasoning but thinking is off (the generation prompt pre-fills an empty, closed reasoning block): the model never writes it',
    remedy: 'pass --reasoning drop to train on the answers without their reasoning, or turn thinking on with the template kwargs',
    changesData: true,
  },
  reasoning_dropped: {
    kind: 'note',
    meaning: 'reasoning removed before rendering (--reasoning drop): reasoning_content and inline <think> blocks',
    changesData: true,
  },
  generation_placeholder_removed: {
    kind: 'note',
    meaning: 'a trailing empty assistant turn (a generation placeholder) removed; with no target left the row is a prompt to generate',
  },
  text_after_last_turn: {
    kind: 'note',
    meaning:
      'the chat template writes text after the last message of every conversation, not part of any turn (its generation prompt also when none is asked for, an instruction turn, an end-of-text token): each turn was taken from before that text and trained after the prompt the server sends, that text never',
  },
  stop_token_from_next_turn: {
    kind: 'note',
    meaning:
      "the turn ends at the next turn's role marker, one of the model's stop tokens (generation_config.json eos_token_id): that token is trained after the turn",
  },
  no_end_of_turn_token: {
    kind: 'note',
    meaning: "a trained turn holds no special token and is not followed by one of the model's stop tokens: it is trained to its end, the model's stop is not",
    remedy: "put the model's generation_config.json (eos_token_id) in the model folder, or check the tokenizer's special tokens",
    changesData: true,
  },
  template_budget_exceeded: {
    kind: 'error',
    meaning:
      'the chat template ran past its render budget (loop iterations, range size, output length, call depth or time; see the message): a broken or hostile template, or a conversation far longer than any the budget was set for',
    remedy:
      'run eagle3-prep check-template on the model folder; if the template is sound and the conversation very long, raise the budget (ChatTemplate options "budget")',
  },
  split_into_records: {
    kind: 'note',
    meaning:
      'a conversation became several records: the template renders earlier turns differently once later turns follow (e.g. Qwen3 drops earlier reasoning / empty think blocks); each assistant turn is still trained exactly once',
  },
} satisfies Record<string, CodeInfo>;

/**
 * A code this table knows. Emitters take a `Code`, so a code with no meaning and remedy here
 * does not compile.
 */
export type Code = keyof typeof TABLE;

/** The table, looked up by any string (codes read back from reports and older runs). */
export const CODES: Readonly<Record<string, CodeInfo>> = Object.freeze(TABLE);

/** Whether `s` is a code of this table. */
export function isCode(s: string): s is Code {
  return Object.prototype.hasOwnProperty.call(TABLE, s);
}

/** The one-line meaning of a code, or '' for an unknown one. */
export function codeMeaning(code: string): string {
  return CODES[code]?.meaning ?? '';
}

/**
 * Whether a code marks data-changing output ({@link CodeInfo.changesData}).
 * Drops and errors count unless their entry says `changesData: false` (a drop
 * the user asked for, such as `duplicate` under --dedup).
 */
/** Whether a note makes its file `degraded` ({@link CodeInfo.degrades}). */
export function isDegrading(code: string): boolean {
  return CODES[code]?.degrades === true;
}

export function isDataChanging(code: string): boolean {
  const c = CODES[code];
  if (c === undefined) return false;
  if (c.changesData !== undefined) return c.changesData;
  return c.kind === 'drop' || c.kind === 'error';
}

/** Whether a code is a note of the chat template and its kwargs, shown once per run ({@link CodeInfo.settingNote}). */
export function isSettingNote(code: string): boolean {
  return CODES[code]?.settingNote === true;
}

/** The one-line remedy of a code, or '' when there is none. */
export function codeRemedy(code: string): string {
  return CODES[code]?.remedy ?? '';
}

/**
 * The remedy of a code for a run with its settings: the table's, except where it would suggest what the run already
 * does (`--long split` / `--long truncate` for `too_long`, `record_dropped_too_long`, `target_too_long`). '' when none.
 * @param run.long the run's `--long` policy (`drop` by default)
 */
export function codeRemedyFor(code: string, run: { long?: 'drop' | 'truncate' | 'split' }): string {
  const long = run.long ?? 'drop';
  if (code === 'too_long' && long === 'split')
    return 'raise --max-length: with --long split a row is too_long when none of its assistant turns fits --max-length even with no history before it (problems.jsonl says by how much); --long truncate keeps the first tokens instead';
  if (code === 'too_long' && long === 'truncate') return 'raise --max-length (problems.jsonl says by how much)';
  if (code === 'record_dropped_too_long' && long !== 'drop') return 'raise --max-length';
  if (code === 'target_too_long' && long === 'truncate') return 'raise --max-length';
  return codeRemedy(code);
}
