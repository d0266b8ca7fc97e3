/**
 * `rl-training-mcp doctor`: the same checks as the rl_doctor tool, for a person at a terminal.
 * Exit code 0 when training could start, 1 otherwise. This is not the MCP mode, so the report
 * goes to the stream it is given (stdout), and logs only to RL_HOME/server.log.
 */
import { doctorSources, formatDoctorReport, runDoctor } from './doctor.js';
import { createLogger } from '../../core/logger.js';
import { SecretRedactor } from '../../core/redact.js';
import { Runtime } from './runtime.js';
import { createHome, secretValues, type Settings } from '../../core/settings.js';

export async function doctorCommand(settings: Settings, out: NodeJS.WritableStream): Promise<number> {
  createHome(settings.home);
  const logger = createLogger({ level: settings.logLevel, home: settings.home, redactor: new SecretRedactor(secretValues(settings)), stderr: false });
  const runtime = new Runtime(settings, { logger });
  try {
    const report = await runDoctor(doctorSources(runtime));
    await new Promise<void>((resolve, reject) => out.write(runtime.redactor.redact(formatDoctorReport(report, settings)), (err) => (err ? reject(err) : resolve())));
    return report.ready ? 0 : 1;
  } finally {
    await runtime.close();
  }
}
