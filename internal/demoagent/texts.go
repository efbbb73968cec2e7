package demoagent

// The agent's user-visible texts in the seven languages of
// preferredLanguage (upstream.md §2.4): en, zh, es, fr, de, ja, pt. A
// missing translation falls back to English.

type textKey int

const (
	msgGuidanceAwaitNetwork textKey = iota
	msgGuidanceAwaitCompute
	msgGuidanceApplied
	msgGuidanceNone
	msgGuidanceSupplement
	msgGuidanceDuplicate
	msgMCPReply
	msgBackupBlocked
	msgPausePrompt
)

var texts = map[textKey]map[string]string{
	msgGuidanceAwaitNetwork: {
		"en": "Planning the network; send guidance to steer it. ",
		"zh": "正在规划网络；可发送指导意见进行调整。",
		"es": "Planificando la red; envía indicaciones para orientarla. ",
		"fr": "Planification du réseau ; envoyez des indications pour l'orienter. ",
		"de": "Das Netzwerk wird geplant; senden Sie Hinweise, um es zu steuern. ",
		"ja": "ネットワークを計画中です。方向を変えるにはガイダンスを送信してください。",
		"pt": "Planejando a rede; envie orientações para direcioná-la. ",
	},
	msgGuidanceAwaitCompute: {
		"en": "Planning the compute; send guidance to steer it. ",
		"zh": "正在规划计算资源；可发送指导意见进行调整。",
		"es": "Planificando el cómputo; envía indicaciones para orientarlo. ",
		"fr": "Planification du calcul ; envoyez des indications pour l'orienter. ",
		"de": "Die Rechenleistung wird geplant; senden Sie Hinweise, um sie zu steuern. ",
		"ja": "コンピューティングを計画中です。方向を変えるにはガイダンスを送信してください。",
		"pt": "Planejando a computação; envie orientações para direcioná-la. ",
	},
	msgGuidanceApplied: {
		"en": "Guidance applied: ",
		"zh": "已采纳指导意见：",
		"es": "Indicación aplicada: ",
		"fr": "Indication appliquée : ",
		"de": "Hinweis übernommen: ",
		"ja": "ガイダンスを適用しました：",
		"pt": "Orientação aplicada: ",
	},
	msgGuidanceNone: {
		"en": "No guidance received; keeping the defaults.",
		"zh": "未收到指导意见；保留默认设置。",
		"es": "No se recibieron indicaciones; se mantienen los valores predeterminados.",
		"fr": "Aucune indication reçue ; les valeurs par défaut sont conservées.",
		"de": "Keine Hinweise erhalten; die Standardwerte bleiben.",
		"ja": "ガイダンスがないため、既定値のままにします。",
		"pt": "Nenhuma orientação recebida; mantendo os padrões.",
	},
	msgGuidanceSupplement: {
		"en": "User guidance added to the running step.",
		"zh": "用户指导意见已加入当前步骤。",
		"es": "Indicación del usuario añadida al paso en curso.",
		"fr": "Indication de l'utilisateur ajoutée à l'étape en cours.",
		"de": "Hinweis des Benutzers zum laufenden Schritt hinzugefügt.",
		"ja": "ユーザーのガイダンスを実行中のステップに追加しました。",
		"pt": "Orientação do usuário adicionada à etapa em andamento.",
	},
	msgGuidanceDuplicate: {
		"en": "This guidance was already applied.",
		"zh": "该指导意见已被采纳。",
		"es": "Esta indicación ya se aplicó.",
		"fr": "Cette indication a déjà été appliquée.",
		"de": "Dieser Hinweis wurde bereits übernommen.",
		"ja": "このガイダンスは適用済みです。",
		"pt": "Esta orientação já foi aplicada.",
	},
	msgMCPReply: {
		"en": "The aliyun-docs MCP server is unavailable; continuing with the built-in tools.",
		"zh": "aliyun-docs MCP 服务器不可用；继续使用内置工具。",
		"es": "El servidor MCP aliyun-docs no está disponible; se continúa con las herramientas integradas.",
		"fr": "Le serveur MCP aliyun-docs est indisponible ; poursuite avec les outils intégrés.",
		"de": "Der MCP-Server aliyun-docs ist nicht verfügbar; es geht mit den eingebauten Werkzeugen weiter.",
		"ja": "MCP サーバー aliyun-docs は利用できません。組み込みツールで続行します。",
		"pt": "O servidor MCP aliyun-docs está indisponível; continuando com as ferramentas integradas.",
	},
	// iac-code's own text, not localised by it (upstream.md §3.4.8).
	msgBackupBlocked: {
		"en": "Session backup failed. Retry after the backup path is available.",
	},
	msgPausePrompt: {
		"en": "The step is changing resources and your message could not be classified. Reply \"continue\" to go on, or ask to roll back or cancel.",
		"zh": "该步骤正在变更资源，无法判断您的消息意图。回复“继续”以继续，或要求回滚或取消。",
		"es": "El paso está modificando recursos y no se pudo clasificar su mensaje. Responda \"continue\" para seguir, o pida revertir o cancelar.",
		"fr": "L'étape modifie des ressources et votre message n'a pas pu être classé. Répondez « continue » pour poursuivre, ou demandez un retour arrière ou une annulation.",
		"de": "Der Schritt ändert Ressourcen, und Ihre Nachricht konnte nicht eingeordnet werden. Antworten Sie „continue“, um fortzufahren, oder verlangen Sie ein Zurücksetzen oder Abbrechen.",
		"ja": "このステップはリソースを変更中のため、メッセージを分類できませんでした。続行するには「continue」と返信するか、ロールバックまたはキャンセルを指示してください。",
		"pt": "A etapa está alterando recursos e sua mensagem não pôde ser classificada. Responda \"continue\" para prosseguir, ou peça para reverter ou cancelar.",
	},
}

// tr returns the text of k in lang (a normLang code), else in English.
func tr(lang string, k textKey) string {
	if s, ok := texts[k][lang]; ok {
		return s
	}
	return texts[k]["en"]
}
