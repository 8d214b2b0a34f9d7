export async function runRealCli(_: unknown): Promise<number> { throw new Error('todo'); }
