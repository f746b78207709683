package harness

import (
	"strings"
	"testing"
)

func TestReadEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want Env
	}{
		{"nothing set", nil, Env{Region: "us-east-1", DummyCredentials: true}},
		{"fauxqs", map[string]string{"SQS_ENDPOINT": "http://127.0.0.1:1", "SQS_SERVER": "fauxqs", "AWS_DEFAULT_REGION": "eu-west-1"},
			Env{Endpoint: "http://127.0.0.1:1", Kind: Fauxqs, Region: "eu-west-1", DummyCredentials: true}},
		{"AWS_REGION wins", map[string]string{"AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-west-1"},
			Env{Region: "ap-south-1", DummyCredentials: true}},
		{"keys in the environment", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA"}, Env{Region: "us-east-1"}},
		{"a profile", map[string]string{"SQS_SERVER": "localstack", "AWS_PROFILE": "dev"}, Env{Kind: LocalStack, Region: "us-east-1"}},
		{"real SQS never gets dummy credentials", map[string]string{"SQS_SERVER": "aws"}, Env{Kind: AWS, Region: "us-east-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadEnv(func(k string) string { return tc.vars[k] })
			if err != nil || got != tc.want {
				t.Fatalf("ReadEnv = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	_, err := ReadEnv(func(k string) string { return map[string]string{"SQS_SERVER": "rabbit"}[k] })
	if err == nil || !strings.Contains(err.Error(), "SQS_SERVER") || !strings.Contains(err.Error(), "elasticmq") {
		t.Fatalf("SQS_SERVER=rabbit: %v; want an error naming SQS_SERVER and the allowed values", err)
	}
}
