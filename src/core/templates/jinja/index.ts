/**
 * The chat-template engine: jinja2's semantics over `@huggingface/jinja`'s lexer and parser (see
 * {@link ./compiledTemplate} for the table of gaps it closes). The modules of this folder, by concern:
 * - compiledTemplate (compile + render entry), ast (AST shapes, compile-time checks), syntax (token rewrites);
 * - expressions and statements (the evaluator), scope (scopes, loop contexts);
 * - values, strings, protocols, repr, json (Python value semantics); floatFormat, printf, strFormat (formatting);
 * - env, args, filters, filterHelpers, tests, operators, strMethods, sandbox, globals (builtins under the sandbox).
 */
export { CompiledTemplate, type RenderEnvOptions } from './compiledTemplate';
export type { PrefixTrace } from './prefixTrace';
export { pythonFloatRepr } from './repr';
