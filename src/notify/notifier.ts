import type { Transporter } from "nodemailer";
import type { Deps } from "../deps.ts";
import { randomId } from "../runtime/random.ts";

export interface Notifier {
  /**
   * Keeps a notification for the account (the dashboard lists them) and emails the account when
   * SMTP_URL is set; without it the notification is logged. Never throws: a mail failure is logged.
   */
  notify(accountId: string, kind: string, subject: string, body: string): Promise<void>;
}

export function createNotifier(deps: Pick<Deps, "config" | "store" | "clock" | "random" | "logger">): Notifier {
  let transport: Transporter | null = null;
  // Loaded on first use: most deployments never send mail, and the module costs start-up time.
  const mailer = async (smtpUrl: string) => (transport ??= (await import("nodemailer")).createTransport(smtpUrl));
  return {
    async notify(accountId, kind, subject, body) {
      const account = deps.store.directory.account(accountId);
      const id = randomId(deps.random, "ntf");
      try {
        await deps.store.notifications.add({
          id,
          accountId,
          kind,
          subject,
          body,
          emailedAt: null,
          createdAt: deps.clock.now(),
        });
        const mail = deps.config.mail;
        if (!mail || !account) {
          deps.logger.warn("notification (no SMTP_URL: not emailed)", { account_id: accountId, kind, subject });
          return;
        }
        await (await mailer(mail.smtpUrl)).sendMail({ from: mail.from, to: account.email, subject, text: body });
        await deps.store.notifications.markEmailed(id, deps.clock.now());
      } catch (error) {
        deps.logger.error("notification could not be sent", { account_id: accountId, kind, error });
      }
    },
  };
}
