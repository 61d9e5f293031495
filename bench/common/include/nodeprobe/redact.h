#pragma once
/// The one secret redaction: everything a report or a support bundle
/// carries (environment, argv, config files, log lines, evidence, reports
/// inside bundles) passes through these functions, which share one rule set:
///
/// - assignments whose name names a secret: `password=`, `secret_key: `,
///   `"token": "..."`, `UCX_AUTH=`, `?token=X&`, `Authorization: Bearer X`,
///   `--password X` (names: password, passwd, passphrase, secret, token, key,
///   auth, credential, signature, cookie, pwd, sig as a word part);
/// - URL credentials `scheme://user:PASSWORD@host` (and `scheme://TOKEN@host`);
/// - `mysql ... -pPASSWORD` and `curl -u user:PASSWORD`;
/// - bearer tokens, AWS access key ids (AKIA/ASIA...), JSON web tokens and
///   well-known token prefixes (ghp_, github_pat_, glpat-, xoxb-, hf_, sk-);
/// - PEM private key blocks (BEGIN ... PRIVATE KEY through END).
///
/// A redacted value becomes "<redacted>"; the name stays, so a reader still
/// sees that the setting was there.

#include <string>
#include <string_view>
#include <vector>

namespace nodeprobe {

inline constexpr const char* kRedacted = "<redacted>";

/// `text` (one line or many) with every secret the rules know replaced.
std::string redact_secrets(std::string_view text);

/// True when a variable, key or flag name names a secret (HF_TOKEN,
/// aws_secret_access_key, UCX_AUTH, client-key-data, --password).
bool secret_name(std::string_view name);

/// The value of `name` as it may be shown: "<redacted>" when the name is a
/// secret's, else the value with its own secrets redacted.
std::string redact_value(std::string_view name, std::string_view value);

/// A command line as it may be shown: flags naming a secret lose their
/// value ("--token X", "--password=X"), and every argument is redacted.
std::vector<std::string> redact_argv(const std::vector<std::string>& argv);

}  // namespace nodeprobe
