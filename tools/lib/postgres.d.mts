export interface TemporaryPostgres {
  url: string;
  binDir: string;
  dir: string;
  port: number;
  stop(): void;
}
export function startTemporaryPostgres(settings?: Record<string, string>): Promise<TemporaryPostgres>;
export function freePort(): Promise<number>;
