package inject_test

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
)

// Fake secrets, shaped like real ones. They are built from parts so that no secret scanner
// mistakes this file for a leak.
var (
	fakeAnthropic = "sk-" + "ant-api03-" + strings.Repeat("Ab1_", 10)
	fakeOpenAI    = "sk-" + "proj-" + strings.Repeat("Xy9-", 10)
	fakeLegacy    = "sk-" + strings.Repeat("aB3", 16)
	fakeStripe    = "sk_" + "live_" + strings.Repeat("Q7w", 8)
	fakeAWSID     = "AKIA" + "IOSFODNN7EXAMPLE"
	fakeAWSTemp   = "ASIA" + "ABCDEFGH12345678"
	fakeAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
	fakeGitHub    = "ghp" + "_" + strings.Repeat("a1B2", 9)
	fakeGitHubPAT = "github" + "_pat_" + strings.Repeat("11AB", 6) + "_" + strings.Repeat("cd34", 10)
	fakeSlack     = "xox" + "b-1234567890-0987654321-" + strings.Repeat("zY", 12)
	fakeGoogle    = "AIza" + "SyA" + strings.Repeat("b1C-", 8)
	fakeJWT       = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakePEM       = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2m\nabc+must/xyz==\n-----END RSA PRIVATE KEY-----"
)

func TestRedact(t *testing.T) {
	const R = inject.Redacted
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Provider keys.
		{"Anthropic", "key: " + fakeAnthropic + " ok", "key: " + R + " ok"},
		{"OpenAIProject", "OPENAI " + fakeOpenAI, "OPENAI " + R},
		{"OpenAILegacy", "use " + fakeLegacy + ".", "use " + R + "."},
		{"Stripe", "stripe " + fakeStripe, "stripe " + R},
		{"AWSAccessKeyID", "id " + fakeAWSID + " here", "id " + R + " here"},
		{"AWSTemporaryKeyID", fakeAWSTemp, R},
		{"AWSSecretEnv", "AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret, "AWS_SECRET_ACCESS_KEY=" + R},
		{"AWSSecretINI", "aws_secret_access_key = " + fakeAWSSecret, "aws_secret_access_key = " + R},
		{"GitHubClassic", "token " + fakeGitHub, "token " + R},
		{"GitHubOAuth", "gho_" + strings.Repeat("x9", 15), R},
		{"GitHubServer", "ghs_" + strings.Repeat("x9", 15), R},
		{"GitHubUser", "ghu_" + strings.Repeat("x9", 15), R},
		{"GitHubFineGrained", "pat " + fakeGitHubPAT, "pat " + R},
		{"Slack", "slack " + fakeSlack, "slack " + R},
		{"SlackUser", "xoxp-12345-67890-abcdef", R},
		{"Google", "maps " + fakeGoogle, "maps " + R},
		{"JWT", "jwt " + fakeJWT + " end", "jwt " + R + " end"},
		{"JWTUnsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", R},
		{"PEM", "before\n" + fakePEM + "\nafter", "before\n" + R + "\nafter"},
		{"PEMOpenSSH", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----", R},
		{"PEMUnterminated", "x -----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\nrest", "x " + R},
		{"PEMTwoBlocks", fakePEM + "\nmid\n" + fakePEM, R + "\nmid\n" + R},
		{"AuthorizationBearer", "Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer " + R},
		{"AuthorizationBasic", `-H "Authorization: Basic dXNlcjpwYXNzd29yZA=="`, `-H "Authorization: Basic ` + R + `"`},
		{"BearerAlone", "curl -H 'bearer abc.def-123'", "curl -H 'bearer " + R + "'"},
		{"URLPassword", "postgres://bob:hunter2@db:5432/x", "postgres://bob:" + R + "@db:5432/x"},
		// Generic assignments: the key stays, the value goes.
		{"EnvPassword", "export DB_PASSWORD=hunter2", "export DB_PASSWORD=" + R},
		{"EnvWordValue", "PASSWORD=correcthorse", "PASSWORD=" + R},
		{"JSONPassword", `{"password": "s3cr3t"}`, `{"password": "` + R + `"}`},
		{"JSONCamelCase", `{"apiToken":"abc"}`, `{"apiToken":"` + R + `"}`},
		{"YAMLSecret", "client_secret: 9f8e7d6c", "client_secret: " + R},
		{"YAMLLongWord", "password: correcthorsebatterystaple", "password: " + R},
		{"Passwd", "passwd=abc123", "passwd=" + R},
		{"APIKeySpaced", "api_key = 'abc'", "api_key = '" + R + "'"},
		{"APIKeyJoined", "APIKEY: x7y8z9", "APIKEY: " + R},
		{"APIKeyDashed", "--api-key=q1w2e3", "--api-key=" + R},
		{"AccessKey", "access_key: AbC-123", "access_key: " + R},
		{"PrivateKey", "private_key=\"abc\"", "private_key=\"" + R + "\""},
		{"GoShortDecl", `token := "abc123"`, `token := "` + R + `"`},
		{"QueryString", "https://x.test/cb?token=abc&x=1", "https://x.test/cb?token=" + R + "&x=1"},
		{"LongNumber", "token=123456789", "token=" + R},
		{"Several", "password=a1 secret=b2", "password=" + R + " secret=" + R},
		// Negatives: prose and code that merely mention secrets.
		{"Tokenizer", "tokenizer=bpe and the tokenizer: ok", "tokenizer=bpe and the tokenizer: ok"},
		{"MaxTokens", "max_tokens: 5", "max_tokens: 5"},
		{"MaxTokensEnv", "MAX_TOKENS=4096", "MAX_TOKENS=4096"},
		{"ShortNumber", "token: 5 and password=1234567", "token: 5 and password=1234567"},
		{"ProseColon", "Never print the token: it expires.", "Never print the token: it expires."},
		{"ProseSecret", "The secret: understanding the code.", "The secret: understanding the code."},
		{"ProseAPIKey", "Never hardcode the API key: use env vars.", "Never hardcode the API key: use env vars."},
		{"Comparison", `if token == "" { return }`, `if token == "" { return }`},
		{"NotEqual", `if password != nil {`, `if password != nil {`},
		{"FunctionCall", "password = getpass()", "password = getpass()"},
		{"Reference", "token = config.token", "token = config.token"},
		{"EnvReference", "password: ${DB_PASSWORD}", "password: ${DB_PASSWORD}"},
		{"DollarReference", "TOKEN=$GITHUB_TOKEN", "TOKEN=$GITHUB_TOKEN"},
		{"Placeholder", "api_key: <your-key>", "api_key: <your-key>"},
		{"Mask", "password: ********", "password: ********"},
		{"TypeAnnotation", "token: string", "token: string"},
		{"NullValue", "secret: null", "secret: null"},
		{"EmptyQuoted", `password: ""`, `password: ""`},
		{"BearerProse", "Bearer instruments are used.", "Bearer instruments are used."},
		{"AuthorizationProse", "Authorization: required", "Authorization: required"},
		{"ShortSk", "sk-learn is a library", "sk-learn is a library"},
		{"TaskDash", "task-abcdefghijklmnopqrstuvwxyz0123", "task-abcdefghijklmnopqrstuvwxyz0123"},
		{"AKIAInWord", "XAKIAIOSFODNN7EXAMPLE", "XAKIAIOSFODNN7EXAMPLE"},
		{"PublicKey", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"URLNoPassword", "https://github.com/a/b", "https://github.com/a/b"},
		{"GoIdentifiers", "func tokenCount(tokens []Token) int", "func tokenCount(tokens []Token) int"},
		{"AlreadyRedacted", "password=" + R + " and " + R, "password=" + R + " and " + R},
		{"Empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inject.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := inject.Redact(got); again != got {
				t.Errorf("Redact not idempotent on %q: %q, then %q", tt.in, got, again)
			}
		})
	}
}

// TestRedact_InContext puts every fake secret in assorted surroundings and checks that none of it
// survives.
func TestRedact_InContext(t *testing.T) {
	secrets := []string{fakeAnthropic, fakeOpenAI, fakeLegacy, fakeStripe, fakeAWSID, fakeAWSTemp,
		fakeGitHub, fakeGitHubPAT, fakeSlack, fakeGoogle, fakeJWT, fakePEM}
	before := []string{"", " ", "\n", "(", "\"", "'", "`", "=", ": ", "token: ", "Bearer ", "Authorization: ", "-", "/", "x=1 ", "日本 "}
	after := []string{"", " ", "\n", ")", "\"", "'", ".", ",", ";", "&a=1", " 日本"}
	for _, s := range secrets {
		tail := s[len(s)-10:]
		for _, b := range before {
			for _, a := range after {
				in := b + s + a
				if got := inject.Redact(in); strings.Contains(got, tail) {
					t.Errorf("Redact(%q) = %q: the secret survives", in, got)
				}
			}
		}
	}
}

// TestRedact_IdempotentCombinations joins pairs of tricky inputs with assorted glue and checks
// that a second Redact changes nothing.
func TestRedact_IdempotentCombinations(t *testing.T) {
	parts := []string{fakeAnthropic, fakeLegacy, fakeAWSID, fakeAWSSecret, fakeGitHub, fakeSlack, fakeJWT, fakePEM,
		"password", "token", "api_key", "Authorization", "Bearer", "https://u", "hunter2", inject.Redacted,
		"${X}", "\"abc\"", "getpass()", "max_tokens", "AKIA", "-----BEGIN PRIVATE KEY-----", "eyJabcd"}
	glue := []string{"", " ", "=", ": ", ":", "\n", "-", "_", ".", "@", "\"", "://", " = "}
	for _, a := range parts {
		for _, g := range glue {
			for _, b := range parts {
				in := a + g + b
				once := inject.Redact(in)
				if twice := inject.Redact(once); twice != once {
					t.Fatalf("Redact not idempotent on %q:\nonce  %q\ntwice %q", in, once, twice)
				}
			}
		}
	}
}
