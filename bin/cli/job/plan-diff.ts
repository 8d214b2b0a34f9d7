/**
 * `job plan`'s diff, printed as nomad prints it (`command/job_plan.go`): `+` added, `-` deleted,
 * `+/-` edited, unchanged fields unmarked; markers, names and values aligned per level, values
 * quoted as Go quotes them; a group's counts and a task's annotations in parentheses. An added
 * or deleted job, group or task shows only its header line unless `verbose`. Colours only when
 * asked (a TTY), in nomad's colours.
 * @module
 */
import { quote } from '../../../actors/templates/fmt.ts';
import type { FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from '../../../agent/jobs/diff/index.ts';
import { paint } from '../io.ts';

type Paint = ReturnType<typeof paint>;
const GREEN = 32;
const RED = 31;
const YELLOW = 33;
const BLUE = 34;
const CYAN = 36;
const LIGHT_YELLOW = 93;
const BOLD = 1;

/** The whole diff, trimmed as nomad trims it (the caller adds the blank line after). */
export function formatJobDiff(job: JobDiff, verbose: boolean, color: boolean): string {
  return new DiffPrinter(paint(color)).job(job, verbose).trim();
}

class DiffPrinter {
  constructor(readonly c: Paint) {}

  /** The marker of a diff type and its width without colour. */
  marker(type: string): [string, number] {
    if (type === 'Added') return [`${this.c(GREEN, '+')} `, 2];
    if (type === 'Deleted') return [`${this.c(RED, '-')} `, 2];
    if (type === 'Edited') return [`${this.c(LIGHT_YELLOW, '+/-')} `, 4];
    return ['', 0];
  }

  job(job: JobDiff, verbose: boolean): string {
    let out = `${this.marker(job.Type)[0]}${this.c(BOLD, `Job: ${quote(job.ID)}`)}\n`;
    const [longestField, fieldMarker] = this.longest(job.Fields, job.Objects);
    const longestMarker = Math.max(fieldMarker, ...(job.TaskGroups ?? []).map((tg) => this.marker(tg.Type)[1]));
    if (job.Type === 'Edited' || verbose) {
      const fo = this.aligned(job.Fields, job.Objects, 0, longestField, longestMarker);
      out += fo;
      if (fo.length > 0) out += '\n';
    }
    for (const tg of job.TaskGroups ?? []) out += `${this.group(tg, longestMarker - this.marker(tg.Type)[1], verbose)}\n`;
    return out;
  }

  group(tg: TaskGroupDiff, tgPrefix: number, verbose: boolean): string {
    let out = `${this.marker(tg.Type)[0]}${' '.repeat(tgPrefix)}${this.c(BOLD, `Task Group: ${quote(tg.Name)}`)}`;
    const kinds = Object.keys(tg.Updates ?? {}).sort();
    if (kinds.length > 0) out += ` (${kinds.map((k) => this.update(k, tg.Updates![k]!)).join(', ')})\n`;
    else out += '\n';
    const [longestField, fieldMarker] = this.longest(tg.Fields, tg.Objects);
    const longestMarker = Math.max(fieldMarker, ...(tg.Tasks ?? []).map((t) => this.marker(t.Type)[1]));
    const sub = tgPrefix + 2;
    if (tg.Type === 'Edited' || verbose) {
      const fo = this.aligned(tg.Fields, tg.Objects, sub, longestField, longestMarker);
      out += fo;
      if (fo.length > 0) out += '\n';
    }
    for (const t of tg.Tasks ?? []) out += `${this.task(t, sub, longestMarker - this.marker(t.Type)[1], verbose)}\n`;
    return out;
  }

  update(kind: string, count: number): string {
    const code = { create: GREEN, destroy: RED, migrate: BLUE, 'in-place update': CYAN, 'create/destroy update': YELLOW, canary: LIGHT_YELLOW }[kind];
    const text = `${count} ${kind}`;
    return code === undefined ? text : this.c(code, text);
  }

  task(t: TaskDiff, start: number, taskPrefix: number, verbose: boolean): string {
    let out = `${' '.repeat(start)}${this.marker(t.Type)[0]}${' '.repeat(taskPrefix)}${this.c(BOLD, `Task: ${quote(t.Name)}`)}`;
    if (t.Annotations?.length) out += ` (${this.annotations(t.Annotations)})`;
    if (t.Type === 'None' || ((t.Type === 'Deleted' || t.Type === 'Added') && !verbose)) return out;
    out += '\n';
    const [longestField, longestMarker] = this.longest(t.Fields, t.Objects);
    return out + this.aligned(t.Fields, t.Objects, start + 2, longestField, longestMarker);
  }

  object(d: ObjectDiff, start: number, keyPrefix: number): string {
    const [marker, markerLen] = this.marker(d.Type);
    let out = `${' '.repeat(start)}${marker}${' '.repeat(keyPrefix)}${d.Name} {\n`;
    const [longestField, longestMarker] = this.longest(d.Fields, d.Objects);
    out += this.aligned(d.Fields, d.Objects, start + keyPrefix + 2, longestField, longestMarker);
    return `${out}\n${' '.repeat(start + markerLen + keyPrefix)}}`;
  }

  field(f: FieldDiff, start: number, keyPrefix: number, valuePrefix: number): string {
    let out = `${' '.repeat(start)}${this.marker(f.Type)[0]}${' '.repeat(keyPrefix)}${f.Name}: ${' '.repeat(valuePrefix)}`;
    if (f.Type === 'Added') out += quote(f.New);
    else if (f.Type === 'Deleted') out += quote(f.Old);
    else if (f.Type === 'Edited') out += `${quote(f.Old)} => ${quote(f.New)}`;
    else out += quote(f.New);
    if (f.Annotations?.length) out += ` (${this.annotations(f.Annotations)})`;
    return out;
  }

  aligned(fields: FieldDiff[] | null, objects: ObjectDiff[] | null, start: number, longestField: number, longestMarker: number): string {
    const fs = fields ?? [];
    const os = objects ?? [];
    let out = '';
    fs.forEach((f, i) => {
      out += this.field(f, start, longestMarker - this.marker(f.Type)[1], longestField - f.Name.length);
      if (i + 1 !== fs.length || os.length > 0) out += '\n';
    });
    os.forEach((o, i) => {
      out += this.object(o, start, longestMarker - this.marker(o.Type)[1]);
      if (i + 1 !== os.length) out += '\n';
    });
    return out;
  }

  longest(fields: FieldDiff[] | null, objects: ObjectDiff[] | null): [number, number] {
    let field = 0;
    let marker = 0;
    for (const f of fields ?? []) {
      field = Math.max(field, f.Name.length);
      marker = Math.max(marker, this.marker(f.Type)[1]);
    }
    for (const o of objects ?? []) marker = Math.max(marker, this.marker(o.Type)[1]);
    return [field, marker];
  }

  annotations(list: string[]): string {
    const code: Record<string, number> = {
      'forces create': GREEN,
      'forces destroy': RED,
      'forces in-place update': CYAN,
      'forces create/destroy update': YELLOW,
    };
    return list.map((a) => (code[a] === undefined ? a : this.c(code[a], a))).join(', ');
  }
}
