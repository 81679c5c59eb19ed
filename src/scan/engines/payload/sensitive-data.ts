/**
 * sensitive_data: secrets (cloud keys, provider tokens, private keys, JWTs, connection strings,
 * passwords in URLs, high-entropy assignments) and personal data (emails, phone numbers, cards
 * with Luhn, IBANs with mod-97, US SSN, UK NINO, Spanish DNI/NIE, Dutch BSN).
 * Only a redacted example per type leaves the engine.
 */
import type { Engine, EngineContext, EngineOutput, Finding, ScanSubject, Severity } from '../../types';
import { findSensitive, redactValue, type DataCategory } from './secrets';
import { MAX_EXCERPT, payloadText, type BudgetSignal, deadlineSignal } from './text';

export interface SensitiveDataFinding {
  type: string;
  category: DataCategory;
  severity: Severity;
  count: number;
  redacted: string;
}

export interface SensitiveDataReport {
  detected: boolean;
  findings: SensitiveDataFinding[];
}

const LABELS: Record<string, string> = {
  aws_access_key_id: 'AWS access key ID',
  aws_secret_access_key: 'AWS secret access key',
  gcp_service_account_key: 'GCP service-account key',
  azure_storage_key: 'Azure storage account key',
  azure_sas_token: 'Azure SAS token signature',
  github_token: 'GitHub token',
  gitlab_token: 'GitLab token',
  slack_token: 'Slack token',
  slack_webhook: 'Slack webhook URL',
  stripe_secret_key: 'Stripe live secret key',
  openai_api_key: 'OpenAI API key',
  anthropic_api_key: 'Anthropic API key',
  google_api_key: 'Google API key',
  twilio_api_key: 'Twilio API key',
  twilio_auth_token: 'Twilio auth token',
  sendgrid_api_key: 'SendGrid API key',
  private_key: 'Private key',
  jwt: 'JSON Web Token',
  database_connection_string: 'Database connection string with password',
  password_in_url: 'Password in URL',
  generic_secret: 'Hard-coded secret',
  email_address: 'Email address',
  phone_number: 'Phone number',
  payment_card: 'Payment card number',
  iban: 'IBAN',
  us_ssn: 'US Social Security number',
  uk_nino: 'UK National Insurance number',
  es_dni: 'Spanish DNI/NIE',
  nl_bsn: 'Dutch BSN',
};

export function analyzeSensitiveData(text: string, signal?: BudgetSignal): SensitiveDataReport {
  const byType = new Map<string, SensitiveDataFinding>();
  for (const hit of findSensitive(text, signal)) {
    const f = byType.get(hit.type);
    if (f) {
      f.count++;
      continue;
    }
    let redacted = redactValue(hit.type, hit.value);
    if (redacted.length > 60) redacted = `${redacted.slice(0, 56)}…`;
    byType.set(hit.type, { type: hit.type, category: hit.category, severity: hit.severity, count: 1, redacted });
  }
  const findings = [...byType.values()];
  return { detected: findings.length > 0, findings };
}

function toFindings(report: SensitiveDataReport): Finding[] {
  return report.findings.map((f) => ({
    id: `payload.sensitive.${f.type}`,
    name: LABELS[f.type] ?? f.type,
    severity: f.severity,
    confidence: f.type === 'generic_secret' || f.type === 'phone_number' ? 0.6 : 0.9,
    category: f.category === 'secret' ? 'secret-exposure' : 'personal-data',
    description: `${LABELS[f.type] ?? f.type} found ${f.count} time${f.count === 1 ? '' : 's'} in the payload.`,
    excerpt: f.redacted.slice(0, MAX_EXCERPT),
  }));
}

export const sensitiveDataEngine: Engine = {
  name: 'sensitive_data',
  async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
    const report = analyzeSensitiveData(payloadText(subject), deadlineSignal(ctx));
    return { findings: toFindings(report), report: { sensitiveData: report } };
  },
};
