/**
 * berth's Go `text/template` engine: Go 1.19's template language, byte for byte, over plain JS
 * data (see docs/templates.md).
 * @module
 */
export { Template, render, type TemplateOptions } from './template.ts';
export { TemplateParseError, TemplateExecError, TemplateFuncError } from './errors.ts';
export { GoFloat, GoByte } from './values.ts';
export type { FuncMap, TemplateFunc } from './funcs.ts';
export type { MissingKey } from './exec.ts';
export { sprint, sprintf, sprintln } from './fmt.ts';
