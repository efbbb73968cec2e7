package demoagent

import "fmt"

// The scenarios' prompts and answers (texts.go explains the languages).
// Option ids and labels stay English: an answer is matched against them
// whatever language it was asked in. Texts iac-code itself does not
// localise (status texts such as "Task canceled.") stay English too.

const (
	msgReplyIntro textKey = iota + 1000 // %[1]s file, %[2]s cwd
	msgReplyOutro
	msgPermTitle
	msgPermPurpose
	msgPermPrompt
	msgPermAllow
	msgPermDeny
	msgPermWorkspace // %s cwd
	msgPermDenied
	msgQuestionPrompt
	msgQuestionFree
	msgSelectPrompt
	msgDeployTitle
	msgDeployPrompt
	msgResIntro
	msgResTitle
	msgResPurpose
	msgResPrompt
	msgResFree
	msgResUsing // %s label
	msgResNone
	msgResNoneAvailable
)

func init() {
	for k, v := range scenarioTexts {
		texts[k] = v
	}
}

// trf formats the text of k in lang with args.
func trf(lang string, k textKey, args ...any) string { return fmt.Sprintf(tr(lang, k), args...) }

var scenarioTexts = map[textKey]map[string]string{
	msgReplyIntro: {
		"en": "Writing %[1]s in %[2]s.",
		"zh": "正在 %[2]s 中写入 %[1]s。",
		"es": "Escribiendo %[1]s en %[2]s.",
		"fr": "Écriture de %[1]s dans %[2]s.",
		"de": "%[1]s wird in %[2]s geschrieben.",
		"ja": "%[2]s に %[1]s を書き込んでいます。",
		"pt": "Escrevendo %[1]s em %[2]s.",
	},
	msgReplyOutro: {
		"en": "The template is ready to deploy.",
		"zh": "模板已准备好部署。",
		"es": "La plantilla está lista para desplegarse.",
		"fr": "Le modèle est prêt à être déployé.",
		"de": "Die Vorlage ist bereit zur Bereitstellung.",
		"ja": "テンプレートはデプロイできる状態です。",
		"pt": "O modelo está pronto para ser implantado.",
	},
	msgPermTitle: {
		"en": "Run a local shell command",
		"zh": "运行本地 Shell 命令",
		"es": "Ejecutar un comando de shell local",
		"fr": "Exécuter une commande shell locale",
		"de": "Einen lokalen Shell-Befehl ausführen",
		"ja": "ローカルのシェルコマンドを実行",
		"pt": "Executar um comando de shell local",
	},
	msgPermPurpose: {
		"en": "Execute a local command needed for the requested infrastructure task.",
		"zh": "执行所请求的基础设施任务所需的本地命令。",
		"es": "Ejecutar un comando local necesario para la tarea de infraestructura solicitada.",
		"fr": "Exécuter une commande locale nécessaire à la tâche d'infrastructure demandée.",
		"de": "Einen lokalen Befehl ausführen, den die angeforderte Infrastrukturaufgabe benötigt.",
		"ja": "要求されたインフラストラクチャ作業に必要なローカルコマンドを実行します。",
		"pt": "Executar um comando local necessário para a tarefa de infraestrutura solicitada.",
	},
	msgPermPrompt: {
		"en": "Run a local shell command Allow once?",
		"zh": "运行本地 Shell 命令 是否允许一次？",
		"es": "Ejecutar un comando de shell local ¿Permitir una vez?",
		"fr": "Exécuter une commande shell locale Autoriser une fois ?",
		"de": "Einen lokalen Shell-Befehl ausführen Einmal erlauben?",
		"ja": "ローカルのシェルコマンドを実行 一度だけ許可しますか？",
		"pt": "Executar um comando de shell local Permitir uma vez?",
	},
	msgPermAllow: {
		"en": "Allow once", "zh": "允许一次", "es": "Permitir una vez", "fr": "Autoriser une fois",
		"de": "Einmal erlauben", "ja": "一度だけ許可", "pt": "Permitir uma vez",
	},
	msgPermDeny: {
		"en": "Deny", "zh": "拒绝", "es": "Denegar", "fr": "Refuser", "de": "Ablehnen", "ja": "拒否", "pt": "Negar",
	},
	msgPermWorkspace: {
		"en": "The workspace is %s.",
		"zh": "工作区是 %s。",
		"es": "El espacio de trabajo es %s.",
		"fr": "L'espace de travail est %s.",
		"de": "Der Arbeitsbereich ist %s.",
		"ja": "ワークスペースは %s です。",
		"pt": "O espaço de trabalho é %s.",
	},
	msgPermDenied: {
		"en": "The command was not run because permission was denied.",
		"zh": "由于权限被拒绝，命令未执行。",
		"es": "El comando no se ejecutó porque se denegó el permiso.",
		"fr": "La commande n'a pas été exécutée car l'autorisation a été refusée.",
		"de": "Der Befehl wurde nicht ausgeführt, weil die Berechtigung verweigert wurde.",
		"ja": "許可が拒否されたため、コマンドは実行されませんでした。",
		"pt": "O comando não foi executado porque a permissão foi negada.",
	},
	msgQuestionPrompt: {
		"en": "Which architecture do you want?",
		"zh": "您想要哪种架构？",
		"es": "¿Qué arquitectura quieres?",
		"fr": "Quelle architecture voulez-vous ?",
		"de": "Welche Architektur möchten Sie?",
		"ja": "どのアーキテクチャにしますか？",
		"pt": "Qual arquitetura você quer?",
	},
	msgQuestionFree: {
		"en": "Or describe it in your own words.",
		"zh": "或者用您自己的话描述。",
		"es": "O descríbela con tus propias palabras.",
		"fr": "Ou décrivez-la avec vos propres mots.",
		"de": "Oder beschreiben Sie sie mit eigenen Worten.",
		"ja": "または、ご自身の言葉で説明してください。",
		"pt": "Ou descreva com suas próprias palavras.",
	},
	msgSelectPrompt: {
		"en": "Select a candidate plan.",
		"zh": "请选择一个候选方案。",
		"es": "Selecciona un plan candidato.",
		"fr": "Sélectionnez un plan candidat.",
		"de": "Wählen Sie einen Kandidatenplan.",
		"ja": "候補プランを選択してください。",
		"pt": "Selecione um plano candidato.",
	},
	msgDeployTitle: {
		"en": "Confirm deployment", "zh": "确认部署", "es": "Confirmar el despliegue", "fr": "Confirmer le déploiement",
		"de": "Bereitstellung bestätigen", "ja": "デプロイの確認", "pt": "Confirmar a implantação",
	},
	msgDeployPrompt: {
		"en": "Deploy stack demo-vpc to cn-hangzhou?",
		"zh": "将资源栈 demo-vpc 部署到 cn-hangzhou？",
		"es": "¿Desplegar la pila demo-vpc en cn-hangzhou?",
		"fr": "Déployer la pile demo-vpc dans cn-hangzhou ?",
		"de": "Stack demo-vpc in cn-hangzhou bereitstellen?",
		"ja": "スタック demo-vpc を cn-hangzhou にデプロイしますか？",
		"pt": "Implantar a pilha demo-vpc em cn-hangzhou?",
	},
	msgResIntro: {
		"en": "The ECS instance needs a VSwitch in cn-hangzhou.",
		"zh": "ECS 实例需要 cn-hangzhou 中的一个交换机。",
		"es": "La instancia ECS necesita un VSwitch en cn-hangzhou.",
		"fr": "L'instance ECS a besoin d'un VSwitch dans cn-hangzhou.",
		"de": "Die ECS-Instanz benötigt einen VSwitch in cn-hangzhou.",
		"ja": "ECS インスタンスには cn-hangzhou の VSwitch が必要です。",
		"pt": "A instância ECS precisa de um VSwitch em cn-hangzhou.",
	},
	msgResTitle: {
		"en": "Select a VSwitch", "zh": "选择交换机", "es": "Selecciona un VSwitch", "fr": "Sélectionnez un VSwitch",
		"de": "VSwitch auswählen", "ja": "VSwitch を選択", "pt": "Selecione um VSwitch",
	},
	msgResPurpose: {
		"en": "Bind the ECS instance to an existing VSwitch.",
		"zh": "将 ECS 实例绑定到已有的交换机。",
		"es": "Vincular la instancia ECS a un VSwitch existente.",
		"fr": "Rattacher l'instance ECS à un VSwitch existant.",
		"de": "Die ECS-Instanz an einen vorhandenen VSwitch binden.",
		"ja": "ECS インスタンスを既存の VSwitch に関連付けます。",
		"pt": "Vincular a instância ECS a um VSwitch existente.",
	},
	msgResPrompt: {
		"en": "Select the VSwitch for the ECS instance",
		"zh": "为 ECS 实例选择交换机",
		"es": "Selecciona el VSwitch para la instancia ECS",
		"fr": "Sélectionnez le VSwitch de l'instance ECS",
		"de": "Wählen Sie den VSwitch für die ECS-Instanz",
		"ja": "ECS インスタンスの VSwitch を選択してください",
		"pt": "Selecione o VSwitch para a instância ECS",
	},
	msgResFree: {
		"en": "Or enter a VSwitch id.",
		"zh": "或输入交换机 ID。",
		"es": "O introduce un id de VSwitch.",
		"fr": "Ou saisissez un id de VSwitch.",
		"de": "Oder geben Sie eine VSwitch-ID ein.",
		"ja": "または VSwitch ID を入力してください。",
		"pt": "Ou informe um id de VSwitch.",
	},
	msgResUsing: {
		"en": "Using VSwitch %s for the ECS instance.",
		"zh": "ECS 实例将使用交换机 %s。",
		"es": "Se usa el VSwitch %s para la instancia ECS.",
		"fr": "Le VSwitch %s est utilisé pour l'instance ECS.",
		"de": "Für die ECS-Instanz wird VSwitch %s verwendet.",
		"ja": "ECS インスタンスには VSwitch %s を使用します。",
		"pt": "Usando o VSwitch %s para a instância ECS.",
	},
	msgResNone: {
		"en": "No VSwitch was chosen, so the ECS instance was left without one.",
		"zh": "未选择交换机，因此 ECS 实例未绑定交换机。",
		"es": "No se eligió ningún VSwitch, así que la instancia ECS quedó sin él.",
		"fr": "Aucun VSwitch n'a été choisi ; l'instance ECS reste sans VSwitch.",
		"de": "Es wurde kein VSwitch gewählt, die ECS-Instanz bleibt ohne.",
		"ja": "VSwitch が選択されなかったため、ECS インスタンスには割り当てていません。",
		"pt": "Nenhum VSwitch foi escolhido, então a instância ECS ficou sem um.",
	},
	msgResNoneAvailable: {
		"en": "No VSwitch was chosen: none is available in cn-hangzhou.",
		"zh": "未选择交换机：cn-hangzhou 中没有可用的交换机。",
		"es": "No se eligió ningún VSwitch: no hay ninguno disponible en cn-hangzhou.",
		"fr": "Aucun VSwitch n'a été choisi : aucun n'est disponible dans cn-hangzhou.",
		"de": "Es wurde kein VSwitch gewählt: In cn-hangzhou ist keiner verfügbar.",
		"ja": "VSwitch が選択されませんでした：cn-hangzhou に利用可能なものがありません。",
		"pt": "Nenhum VSwitch foi escolhido: não há nenhum disponível em cn-hangzhou.",
	},
}
