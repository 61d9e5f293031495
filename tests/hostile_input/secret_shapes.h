#pragma once
// The seeded set of secret shapes (issue 14): each as it appears in an
// environment dump, a command line, a config file or a log line. Shared by
// the unit test of the redaction and the bundle / report end-to-end tests.

#include <string>
#include <vector>

namespace nodeprobe::testing {

struct SecretShape {
  const char* kind;
  std::string text;    ///< the line (or lines) holding it
  std::string secret;  ///< must be gone after redaction
  std::string kept;    ///< must still be there (the context a reader needs)
};

inline std::vector<SecretShape> secret_shapes() {
  return {
      {"aws access key id", "aws_access_key_id AKIAIOSFODNN7EXAMPLE in use", "AKIAIOSFODNN7EXAMPLE", "in use"},
      {"aws session key id", "id=ASIAY34FZKBOKMUTVV7A ok", "ASIAY34FZKBOKMUTVV7A", "ok"},
      {"aws secret key (config)", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
       "wJalrXUtnFEMI", "aws_secret_access_key"},
      {"aws secret key (env)", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI",
       "AWS_SECRET_ACCESS_KEY="},
      {"aws session token", "aws_session_token=IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ rest",
       "IQoJb3JpZ2luX2Vj", "rest"},
      {"presigned url", "GET https://b.s3.amazonaws.com/k?X-Amz-Security-Token=FwoGZXIvYXdz&X-Amz-Signature=abcd1234ef",
       "FwoGZXIvYXdz", "b.s3.amazonaws.com"},
      {"bearer header", "curl -H 'Authorization: Bearer ya29.a0AfH6SMBx3' https://api", "ya29.a0AfH6SMBx3",
       "Authorization: Bearer"},
      {"basic header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "Authorization: Basic"},
      {"url credentials", "git clone https://user:ghsecret123@github.com/org/repo.git", "ghsecret123",
       "github.com/org/repo.git"},
      {"url token as user", "pip install git+https://gho_16C7e42F292c6912E7710c838347Ae178B4a@github.com/x",
       "gho_16C7e42F292c6912E7710c838347Ae178B4a", "github.com/x"},
      {"mysql -p", "mysql -h db -uadmin -pS3cr3tPw! sales", "S3cr3tPw!", "sales"},
      {"password env", "DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor", "DB_PASSWORD="},
      {"password argv", "app --password hunter2 --verbose", "hunter2", "--verbose"},
      {"password config", "password: correct-horse-battery", "correct-horse-battery", "password:"},
      {"password json", "{\"user\": \"a\", \"password\": \"js0nPw\"}", "js0nPw", "\"user\": \"a\""},
      {"secret_key", "secret_key=abcdef0123456789", "abcdef0123456789", "secret_key="},
      {"token assignment", "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_AbCdEfGh", "HF_TOKEN="},
      {"api key", "api-key: 9f8e7d6c5b4a", "9f8e7d6c5b4a", "api-key:"},
      {"UCX_AUTH", "UCX_AUTH=ucx-shared-secret UCX_TLS=rc", "ucx-shared-secret", "UCX_TLS=rc"},
      {"token in a path's query", "NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log?token=X9y8Z7", "X9y8Z7",
       "NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log?token="},
      {"PEM private key",
       "cfg:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98pQnoQ\nUd2Zz1ZPkrTnbMfb\n"
       "-----END RSA PRIVATE KEY-----\nafter",
       "MIIEowIBAAKCAQEA7bq98pQnoQ", "after"},
      {"openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "b3BlbnNzaC1rZXktdjEAAAAA",
       ""},
      {"kubeconfig token", "users:\n- name: admin\n  user:\n    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2ln\n",
       "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9", "name: admin"},
      {"kubeconfig client key", "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=",
       "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo", "client-key-data:"},
      {"bare jwt", "sent eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4 ok",
       "SflKxwRJSMeKKF2QT4", "ok"},
      {"github token", "using ghp_1234567890abcdefghijABCDEFGHIJ123456 now", "ghp_1234567890", "now"},
      {"slack token", "hook xoxb-123456789012-abcdefABCDEF done", "xoxb-123456789012", "done"},
  };
}

}  // namespace nodeprobe::testing
