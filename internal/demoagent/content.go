package demoagent

import (
	"strings"
)

// Scripted IaC content. Every text is deterministic; the cwd is part of
// the reply so tests can see the workspace binding.

const vpcTemplate = `ROSTemplateFormatVersion: '2015-09-01'
Description: VPC with two vSwitches in two zones
Parameters:
  ZoneA:
    Type: String
    AssociationProperty: ALIYUN::ECS::Instance::ZoneId
  ZoneB:
    Type: String
    AssociationProperty: ALIYUN::ECS::Instance::ZoneId
Resources:
  Vpc:
    Type: ALIYUN::ECS::VPC
    Properties:
      VpcName: demo-vpc
      CidrBlock: 192.168.0.0/16
  VSwitchA:
    Type: ALIYUN::ECS::VSwitch
    Properties:
      VpcId: {Ref: Vpc}
      ZoneId: {Ref: ZoneA}
      CidrBlock: 192.168.1.0/24
  VSwitchB:
    Type: ALIYUN::ECS::VSwitch
    Properties:
      VpcId: {Ref: Vpc}
      ZoneId: {Ref: ZoneB}
      CidrBlock: 192.168.2.0/24
Outputs:
  VpcId:
    Value: {Ref: Vpc}
`

const ossTemplate = `ROSTemplateFormatVersion: '2015-09-01'
Description: Private OSS bucket with versioning
Parameters:
  BucketName:
    Type: String
    Default: demo-bucket
Resources:
  Bucket:
    Type: ALIYUN::OSS::Bucket
    Properties:
      BucketName: {Ref: BucketName}
      AccessControl: private
      VersioningConfiguration:
        Status: Enabled
Outputs:
  BucketDomain:
    Value: {'Fn::GetAtt': [Bucket, DomainName]}
`

const tfTemplate = `terraform {
  required_providers {
    alicloud = { source = "aliyun/alicloud" }
  }
}

resource "alicloud_vpc" "main" {
  vpc_name   = "demo-vpc"
  cidr_block = "192.168.0.0/16"
}

resource "alicloud_vswitch" "a" {
  vpc_id     = alicloud_vpc.main.id
  cidr_block = "192.168.1.0/24"
  zone_id    = "cn-hangzhou-h"
}
`

// iacFile picks the scripted file for a request text.
func iacFile(lower string) (name, body, lang string) {
	switch {
	case strings.Contains(lower, "terraform"):
		return "main.tf", tfTemplate, "hcl"
	case strings.Contains(lower, "bucket") || strings.Contains(lower, "oss"):
		return "bucket.yaml", ossTemplate, "yaml"
	default:
		return "vpc.yaml", vpcTemplate, "yaml"
	}
}

// normLang reduces preferredLanguage to a supported code (zh-CN → zh);
// unsupported values fall back to en.
func normLang(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if i := strings.IndexAny(v, "-_"); i > 0 {
		v = v[:i]
	}
	switch v {
	case "en", "zh", "es", "fr", "de", "ja", "pt":
		return v
	}
	return "en"
}

// replyIntro is the first sentence of the main reply.
func replyIntro(lang, file, cwd string) string { return trf(lang, msgReplyIntro, file, cwd) }

func replyOutro(lang string) string { return tr(lang, msgReplyOutro) }

// replyChunks splits the main reply into the deltas streamed for it.
func replyChunks(lang, file, body, syntax, cwd string) []string {
	return []string{
		replyIntro(lang, file, cwd) + "\n\n",
		"```" + syntax + "\n",
		body,
		"```\n\n",
		replyOutro(lang),
	}
}

type permText struct{ title, purpose, prompt, allow, deny string }

func permissionText(lang string) permText {
	return permText{tr(lang, msgPermTitle), tr(lang, msgPermPurpose), tr(lang, msgPermPrompt), tr(lang, msgPermAllow), tr(lang, msgPermDeny)}
}
