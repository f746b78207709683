package harness

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Kinds of server SQS_SERVER names, for the differences each declares ("",
// SQS_SERVER unset, is a server taken to behave like Amazon SQS).
const (
	Fauxqs     = "fauxqs"
	LocalStack = "localstack"
	ElasticMQ  = "elasticmq"
	AWS        = "aws"
)

// Env is the SQS-compatible server the environment names for the
// real-server tests of every module.
type Env struct {
	// Endpoint is SQS_ENDPOINT, the server's base URL; "" when unset.
	Endpoint string

	// Kind is SQS_SERVER: one of the kind constants, or "" (unset: a server
	// taken to behave like Amazon SQS).
	Kind string

	// Region is AWS_REGION, else AWS_DEFAULT_REGION, else "us-east-1".
	Region string

	// DummyCredentials says a client signs with static dummy credentials:
	// the server is an emulator (Kind is not AWS), which takes any, and the
	// environment has none (neither AWS_ACCESS_KEY_ID nor AWS_PROFILE).
	DummyCredentials bool
}

// ReadEnv reads Env through getenv (os.Getenv, or a stand-in in tests). An
// SQS_SERVER that names no known kind is an error naming the variable and
// the allowed values.
func ReadEnv(getenv func(string) string) (Env, error) {
	e := Env{Endpoint: getenv("SQS_ENDPOINT"), Kind: getenv("SQS_SERVER"), Region: getenv("AWS_REGION")}
	switch e.Kind {
	case "", Fauxqs, LocalStack, ElasticMQ, AWS:
	default:
		return Env{}, fmt.Errorf("SQS_SERVER=%q: want fauxqs, localstack, elasticmq or aws (or unset: a server like Amazon SQS)", e.Kind)
	}
	if e.Region == "" {
		e.Region = getenv("AWS_DEFAULT_REGION")
	}
	if e.Region == "" {
		e.Region = "us-east-1"
	}
	e.DummyCredentials = e.Kind != AWS && getenv("AWS_ACCESS_KEY_ID") == "" && getenv("AWS_PROFILE") == ""
	return e, nil
}

// ConfigOptions returns the aws-sdk-go-v2 config options a client of a
// server in region needs: the region and, with dummy, static credentials
// ("test", "test"); without, the environment's credential chain applies.
func ConfigOptions(region string, dummy bool) []func(*config.LoadOptions) error {
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	if dummy {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	}
	return opts
}
