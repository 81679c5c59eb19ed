/**
 * Prompt-injection pattern families. Patterns are written over lower-cased text with a single
 * space standing for 1-3 whitespace characters; every quantifier is bounded and each rule has
 * literal needles, so a rule's regex only runs when one of its words occurs.
 */
import type { Severity } from '../../types';

export type InjectionFamily =
  | 'instruction_override' | 'role_hijack' | 'system_prompt_extraction' | 'jailbreak'
  | 'delimiter_injection' | 'indirect_injection';

export interface InjectionRule {
  id: string;
  family: InjectionFamily;
  severity: Severity;
  needles: string[];
  re: RegExp;
}

const AI = '(?:ai|a\\.i\\.|llm|large language model|language model|ai assistant|assistant|chatbot|gpt|chatgpt|claude|ai agent|ai model|model)';

/** Not preceded by a negation ("never reveal your instructions" is a defence, not a request). */
const NOT_NEGATED = "(?<!\\b(?:never|not|n't|no|nor|refuse to|cannot|can't|won't)\\s{1,3})";

function rule(id: string, family: InjectionFamily, severity: Severity, needles: string[], pattern: string): InjectionRule {
  return { id, family, severity, needles, re: new RegExp(pattern.replace(/ /g, '\\s{1,3}'), 'g') };
}

export const RULES: InjectionRule[] = [
  // ---- instruction override ----
  rule('ignore_previous_instructions', 'instruction_override', 'high',
    ['ignore', 'disregard', 'forget', 'override', 'bypass', 'neglect', 'discard', 'abandon'],
    '\\b(?:ignore|disregard|forget|override|bypass|neglect|discard|abandon) (?:(?:all|any|each|every|the|your|my|these|those|of|everything|what) ){0,3}(?:previous|prior|above|earlier|preceding|former|original|initial|foregoing|system|developer|safety)(?: [a-z]{1,20}){0,2}? (?:instructions?|prompts?|rules|directions|directives|guidelines|commands|context|constraints|guardrails|programming|policies|restrictions|orders|guidance)\\b'),
  rule('ignore_everything_before', 'instruction_override', 'high', ['ignore', 'disregard', 'forget'],
    '\\b(?:ignore|disregard|forget) (?:everything|all|anything) (?:(?:you (?:were|have been|\'ve been) (?:told|given|instructed))|above|before this|said before|previously|prior to this)'),
  rule('do_not_follow_instructions', 'instruction_override', 'high', ['follow', 'obey', 'listen', 'adhere'],
    '\\b(?:do not|don\'t|stop|no longer) (?:follow|obey|listen to|adhere to) (?:your|the|any) (?:previous|prior|original|system|initial|earlier) (?:instructions|rules|prompt|guidelines|programming)'),
  rule('new_instructions_marker', 'instruction_override', 'medium', ['instructions', 'task', 'directive', 'orders'],
    '\\b(?:new|updated|real|actual|true|revised) (?:instructions|task|directive|orders)\\s{0,2}:'),
  rule('instructions_supersede', 'instruction_override', 'high', ['override', 'supersede', 'precedence', 'replace'],
    '\\b(?:these|the following|my|this) (?:instructions|rules|message|prompt) (?:override|overrides|supersede|supersedes|take precedence over|takes precedence over|replace|replaces) (?:all|any|your|the|every)'),
  rule('instead_your_task_is', 'instruction_override', 'medium', ['instead', 'rather'],
    '\\b(?:instead|rather),? your (?:new |real |only |actual )?(?:task|job|goal|purpose|mission) is (?:now )?to'),
  rule('from_now_on_only', 'instruction_override', 'high', ['from now on'],
    '\\bfrom now on,? (?:you (?:will|must|shall|should) (?:only|always|never)|only (?:respond|reply|answer|output))'),

  rule('forget_all_tasks', 'instruction_override', 'high',
    ['forget', 'ignore', 'disregard', 'discard', 'abandon', 'drop', 'erase', 'aside', 'neglect', 'skip'],
    '\\b(?:forget|ignore|disregard|discard|abandon|drop|erase|put aside|set aside|neglect|skip) (?:about )?(?:all|everything|any|every|each)(?: of)?(?: (?:the|your|my|these|those|that))?(?: (?:previous|prior|above|earlier|preceding|former|old|initial|original|other|given|current))? (?:tasks?|assignments?|instructions?|rules|prompts?|directives|guidelines|commands|orders|constraints|programming|restrictions|context|conversation|information|you(?:\'ve| have) (?:been )?(?:told|given|learned)|(?:that )?(?:was )?said (?:before|above|so far))\\b'),
  rule('forget_your_rules', 'instruction_override', 'high',
    ['forget', 'ignore', 'disregard', 'discard', 'abandon', 'override', 'bypass'],
    '\\b(?:forget|ignore|disregard|discard|abandon|override|bypass) your (?:(?:previous|prior|original|initial|system|earlier|current|own|programmed|built-in) )?(?:rules|instructions|programming|guidelines|system prompt|prompt|directives|restrictions|constraints|training|guardrails|safeguards|filters)\\b'),
  rule('focus_on_new_task', 'instruction_override', 'high', ['new task', 'new assignment', 'new instructions', 'new job'],
    '\\b(?:now |instead |from now on )?(?:focus|concentrate|work) (?:only |solely |exclusively )?on (?:your|the|this|my) new (?:task|assignment|job|instructions?)'),
  rule('claims_developer_authority', 'instruction_override', 'medium', ['developer', 'creator', 'programmer', 'admin', 'owner', 'operator'],
    '\\b(?:i am|i\'m) (?:your|the) (?:developer|creator|programmer|admin(?:istrator)?|owner|operator|system administrator)\\b[^\\n]{0,80}?(?:ignore|forget|disregard|override|bypass|new (?:rule|instruction)|you (?:must|will|can now)|unlock|disable)'),
  // Written from the leave-one-source-out misses of the training sources (deepset train split):
  // "forget everything before that", "now new instructions follow", "leave all the previous
  // information behind". Each needs words that point back at what came before, so "forget
  // everything I said about the budget" stays clean.
  rule('forget_everything_before', 'instruction_override', 'high', ['forget', 'ignore', 'disregard'],
    '\\b(?:forget|ignore|disregard) (?:about )?(?:everything|all of (?:it|that)|it all) (?:(?:said |written |mentioned |you (?:were|have been) told )?(?:before (?:that|this)|above|beforehand|before now|up to (?:now|here|this point)|so far|until now)|we (?:have )?(?:discussed|talked about|said)(?: (?:before|beforehand|so far|earlier))?)\\b'),
  rule('new_instructions_follow', 'instruction_override', 'medium', ['follow', 'folgen'],
    '\\b(?:now (?:new|further) (?:tasks|instructions|assignments) (?:follow|are followed)|nun folgen (?:neue|weitere) (?:aufgaben|anweisungen))\\b'),
  rule('leave_previous_behind', 'instruction_override', 'high', ['behind', 'out of your', 'hinter sich', 'aus dem kopf'],
    '\\b(?:(?:leave|put) all (?:the )?(?:previous|prior|earlier) (?:information|tasks|instructions|context) behind|remove all (?:the )?(?:previous|prior|earlier) (?:tasks|instructions|information) out of your (?:head|mind|memory)|alle (?:vorherigen|vorangegangenen|bisherigen) (?:informationen|aufgaben|anweisungen) (?:hinter sich|aus dem kopf))'),
  // German, French, Spanish overrides (the phrasing customers' users actually type)
  rule('override_de', 'instruction_override', 'high', ['ignorier', 'vergiss', 'vergessen', 'missacht', 'verwirf'],
    '\\b(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie|verwirf|verwerfen sie) (?:bitte )?(?:(?:alle|alles|sämtliche|die|deine|ihre|jegliche|jede) )?(?:(?:vorherigen?|bisherigen?|obigen?|vorangegangenen?|vorangehenden?|früheren?|vorigen?|ursprünglichen?|alten|gegebenen) )?(?:anweisungen|instruktionen|aufgaben|befehle|regeln|vorgaben|richtlinien|anordnungen|einschränkungen|systemanweisungen)\\b'),
  rule('forget_everything_de', 'instruction_override', 'high', ['vergiss alles', 'vergessen sie alles', 'ignoriere alles'],
    '\\b(?:vergiss|vergessen sie|ignoriere|ignorieren sie) alles(?:,)? (?:was|davor|zuvor|bisher|vorher|oben|bis hierher)'),
  rule('new_task_de', 'instruction_override', 'high', ['neue aufgabe', 'neuen aufgabe', 'neue anweisung'],
    '\\b(?:konzentriere dich|konzentrieren sie sich|fokussiere dich|deine|ihre) (?:jetzt |nun |ab jetzt |ab sofort )?(?:auf (?:deine|ihre|die) neue aufgabe|neue (?:aufgabe|anweisung) (?:ist|lautet))'),
  rule('reveal_prompt_de', 'system_prompt_extraction', 'high', ['prompt', 'anweisungen', 'systemanweisung'],
    '\\b(?:zeige?|zeigen sie|gib|geben sie|nenne|nennen sie|verrate|verraten sie|wiederhole|wiederholen sie) (?:mir |uns )?(?:alle |bitte )?(?:deine|ihre|den|die) (?:(?:ursprünglichen|geheimen|versteckten|kompletten|vollständigen) )?(?:system-?prompts?|systemanweisungen|prompt-texte|prompts?|anweisungen|instruktionen)\\b'),
  rule('override_fr_es', 'instruction_override', 'high', ['ignore', 'oublie', 'ignora', 'olvida', 'olvide'],
    '\\b(?:ignore[sz]?|oublie[sz]?|ignora|ignore|olvida|olvide|olvidad) (?:toutes |tous |todas |todos )?(?:les|tes|vos|las|tus|sus|los) (?:instructions|consignes|r[eè]gles|instrucciones|reglas|[oó]rdenes|tâches|tareas)(?: (?:pr[eé]c[eé]dentes|anteriores|previas))?\\b'),

  // ---- role / persona hijack ----
  rule('you_are_now_persona', 'role_hijack', 'high', ['you are now', 'you\'re now'],
    '\\byou(?: are|\'re) now (?:a |an |the |my |in |called |named |acting as |going to act as )?[^\\n.]{0,50}?(?:\\bai\\b|assistant|chatbot|persona|character|hacker|criminal|villain|\\bdan\\b|\\bgpt|unrestricted|unfiltered|uncensored|jailbroken|evil|without (?:any )?(?:rules|restrictions|limits|filters)|no (?:rules|restrictions|limits|filters)|developer mode|god mode)'),
  rule('you_are_no_longer', 'role_hijack', 'high', ['no longer'],
    `\\byou(?: are|'re) no longer (?:an? |bound|restricted|limited|required|chatgpt|claude|${AI}\\b)`),
  rule('from_now_on_you_are', 'role_hijack', 'high', ['from now on'],
    '\\bfrom now on,? you (?:are|will act|will pretend|will roleplay|will play the role|shall act|\'ll act|\'re going to act|will be acting)'),
  rule('pretend_unrestricted', 'role_hijack', 'high', ['pretend', 'imagine', 'suppose'],
    '\\b(?:pretend|imagine|suppose) (?:that )?(?:you are|you\'re|to be|you were) (?:an? |the )?[^\\n.]{0,60}?(?:without|no|not bound|unfiltered|uncensored|evil|unrestricted|free from|jailbroken|any (?:rules|restrictions))\\b'),
  rule('act_as_unrestricted', 'role_hijack', 'high', ['act as', 'behave as', 'roleplay', 'role-play', 'role play'],
    '\\b(?:act|behave|roleplay|role-play|role play) (?:as|like) (?:if you (?:are|were|have) )?(?:an? |the )?[^\\n.]{0,50}?(?:with no|without|free of|free from|unbound by|not bound by) (?:any )?(?:restrictions|limits|limitations|filters|rules|guidelines|censorship|ethics|morals|content polic(?:y|ies)|safety)'),
  rule('new_persona', 'role_hijack', 'high', ['new'],
    '\\b(?:your|the assistant\'s) new (?:role|persona|identity|name|purpose|personality) is'),
  rule('answer_as_unrestricted', 'role_hijack', 'high', ['answer as', 'respond as', 'reply as'],
    '\\b(?:answer|respond|reply) as (?:dan|an? (?:unrestricted|unfiltered|uncensored|evil|jailbroken))'),

  rule('roleplay_game_no_rules', 'role_hijack', 'high', ['game', 'roleplay', 'role-play', 'role play'],
    '\\blet\'?s (?:play|do|start) (?:a |an |this )?(?:game|role-?play|role play|scenario)\\b[^\\n]{0,240}?(?:no (?:rules|restrictions|limits|limitations|filters|ethics|morals|boundaries)|without (?:any )?(?:rules|restrictions|limits|filters|ethics|morals|censorship)|unrestricted|unfiltered|uncensored|not bound by|anything (?:goes|i (?:say|ask))|ignore (?:your|all|any))'),
  rule('stay_in_character', 'role_hijack', 'medium', ['character'],
    '\\b(?:stay|remain|keep) in character\\b[^\\n]{0,120}?(?:no matter what|at all times|never break|even if|whatever (?:i|happens))|\\bnever break (?:out of )?character\\b'),
  rule('deceased_relative_roleplay', 'role_hijack', 'high', ['grandma', 'grandmother', 'grandpa', 'grandfather'],
    '\\b(?:act|pretend|roleplay|role-play|play) (?:as|to be|the role of) (?:my|a|an) (?:deceased|dead|late|passed away) (?:grandma|grandmother|grandpa|grandfather|mother|father)'),
  rule('you_are_now_de', 'role_hijack', 'high', ['du bist', 'sie sind'],
    '\\b(?:du bist|sie sind) (?:jetzt|nun|ab jetzt|ab sofort|von nun an) (?:ein |eine |der |die )?[^\\n.]{0,50}?(?:ohne (?:regeln|einschränkungen|filter|grenzen|zensur)|uneingeschränkt|unzensiert|ungefiltert|\\bdan\\b|böse)'),

  // ---- system-prompt extraction ----
  rule('reveal_system_prompt', 'system_prompt_extraction', 'high',
    ['system', 'initial', 'hidden', 'original', 'prompt', 'instructions', 'developer', 'confidential', 'secret'],
    '\\b(?:reveal|show|print|repeat|output|display|tell me|give me|leak|dump|disclose|share|write out|list|recite|provide|spell out|what (?:is|are|was|were)) (?:me )?(?:your|the|all of your|all your) (?:(?:full|entire|complete|original|initial|hidden|secret|exact|verbatim|confidential|internal|underlying|real) ){0,2}(?:system (?:prompt|message|instructions?)|initial (?:prompt|instructions)|hidden (?:prompt|instructions)|original (?:prompt|instructions)|pre-?prompt|instructions you (?:were|have been) given|developer (?:message|instructions|prompt)|confidential instructions|secret instructions)'),
  rule('repeat_text_above', 'system_prompt_extraction', 'high', ['above', 'before this', 'preceding'],
    '\\b(?:repeat|print|output|copy|echo|reveal|write|reproduce) (?:all |everything |the (?:text|words|content|prompt|instructions|message) )?(?:above|before this|preceding|prior)(?: [a-z]{1,12}){0,3}? (?:verbatim|word for word|exactly as written|starting (?:with|from)|in a (?:code ?block|markdown block))'),
  rule('transform_system_prompt', 'system_prompt_extraction', 'high', ['system prompt', 'system instructions', 'initial instructions', 'hidden instructions', 'original instructions', 'pre-prompt', 'preprompt'],
    '\\b(?:translate|encode|convert|rewrite|summari[sz]e|paraphrase|spell out|reverse|encrypt|rephrase|turn|put) (?:all of |the whole of |the text of )?your (?:(?:full|entire|complete|exact) )?(?:system prompt|system instructions|initial instructions|hidden instructions|original instructions|pre-?prompt)\\b'),
  // Written from the training sources' prompt-leak attacks (Tensor Trust extraction, pallms,
  // TakSec, promptshield): "output your prompt", "list your initial instructions", "what are the
  // exact instructions you were given", "repeat back the exact text before". A negation in front
  // ("never reveal your instructions", the defensive line of many system prompts) does not count,
  // nor does "your instructions for/on/about ..." (a request for a how-to).
  rule('print_your_instructions', 'system_prompt_extraction', 'high',
    ['your', 'hidden', 'secret', 'initial', 'original', 'system'],
    `${NOT_NEGATED}\\b(?:reveal|show|print|repeat|output|display|tell me|give me|leak|dump|disclose|share|write out|write down|list|recite|provide|spell out|type out|paste|explain)(?: me| us)?(?: all(?: of)?| every(?: one of)?| each of| back)? (?:your (?:(?:full|entire|complete|exact|original|initial|initials|first|hidden|secret|verbatim|whole|current|system) )?(?:list of |set of |text of )?(?:instructions|directives|initial prompt|guide ?lines|prompt|system prompt)|the (?:hidden|secret|initial|original|system|verbatim) (?:instructions|prompt))\\b(?! (?:for|on|about|to|of|in|and|from|that (?:i|we))\\b)`),
  rule('instructions_you_were_given', 'system_prompt_extraction', 'high', ['instruction'],
    `${NOT_NEGATED}\\b(?:repeat|print|list|tell me|show|reveal|explain|output|respond with|write|say|recite|what|which)\\b[^\\n.?]{0,30}?\\binstructions? (?:that )?you (?:were|have been|had been|got|received|are) (?:given|told|provided|programmed with)`),
  rule('repeat_text_before', 'system_prompt_extraction', 'high', ['above', 'before', 'preceding', 'prior', 'earlier', 'so far'],
    `${NOT_NEGATED}\\b(?:repeat|print|output|echo|reproduce|recite|spell out)(?: back)? (?:all|everything|the (?:exact|entire|full|whole|complete) (?:text|words|content|message|instructions|prompt))(?: (?:that|which))?(?: (?:was|is|appears|came|you (?:were|have been) given))?(?: (?:written|said|given|shown))? (?:above|before(?: this)?|preceding|prior to this|earlier|so far)\\b`),
  rule('text_of_the_prompt', 'system_prompt_extraction', 'high', ['text of'],
    '\\b(?:complete|full|entire|exact|whole|original) text of (?:the|your) (?:prompt|instructions|system (?:prompt|message))\\b'),
  rule('what_were_you_told', 'system_prompt_extraction', 'medium', ['told', 'instructed', 'programmed', 'instructions'],
    '\\bwhat (?:were|are|have) you (?:been )?(?:told|instructed|programmed|given as instructions)(?: to do)? (?:before|above|at the (?:start|beginning)|in your (?:system|initial))'),

  // ---- jailbreak templates ----
  rule('dan_jailbreak', 'jailbreak', 'critical', ['do anything now', 'dan'],
    '\\b(?:do anything now|dan mode|dan \\d{1,2}(?:\\.\\d)?\\b|as dan\\b|you are dan\\b|\\[dan\\]|stay as dan|dan,? which stands for)'),
  rule('jailbreak_mode', 'jailbreak', 'high', ['mode'],
    '\\b(?:(?:god|jailbreak|jailbroken|dan|unrestricted|unfiltered|evil|chaos) mode (?:enabled|activated|on|engaged)|(?:developer|god|jailbreak|dan) mode output|simulate (?:developer|god|jailbreak|dan) mode|(?:act|respond) (?:as|in) (?:developer|god|jailbreak|dan) mode|enable (?:god|jailbreak|dan|unrestricted|unfiltered) mode)'),
  rule('no_ethics', 'jailbreak', 'high', ['ethic', 'moral', 'safety', 'content'],
    '\\b(?:no|without|free from|free of|devoid of|ignore (?:all |your |any )?|not bound by (?:any )?)(?:any )?(?:ethical|moral|ethics|morals|safety|content) (?:guidelines|restrictions|constraints|boundaries|filters|limitations|principles|considerations|polic(?:y|ies))'),
  rule('policy_bypass', 'jailbreak', 'high', ['polic', 'guideline', 'filter', 'guardrail', 'restriction'],
    '\\b(?:ignore|bypass|disregard|break|violate|circumvent|override|evade|get around) (?:all |any |the |your )?(?:openai|anthropic|openai\'s|anthropic\'s|content|usage|safety|ethical)(?:\'s)? (?:content |usage |safety )?(?:polic(?:y|ies)|guidelines|filters?|guardrails|restrictions)'),
  rule('named_jailbreak_persona', 'jailbreak', 'high', ['aim', 'stan', 'dude', 'mongo tom', 'confidant', 'betterdan', 'antidan', 'anti-dan', 'ucar', 'apophis'],
    '\\b(?:aim|stan|dude|mongo tom|evil confidant|betterdan|antidan|anti-dan|ucar|apophis)\\b[^\\n]{0,100}?(?:unfiltered|amoral|no (?:ethical|moral)|without (?:any )?(?:restrictions|filters|ethics|morals)|doesn\'t have any|does not have any|never refuses?|no restrictions|machiavellian)'),
  rule('disable_your_safety', 'jailbreak', 'high', ['disable', 'deactivate', 'turn off', 'switch off', 'suspend', 'lift'],
    '\\b(?:disable|deactivate|turn off|switch off|suspend|lift) (?:all |all of |any of )?your (?:(?:safety|content|ethical|moral) )?(?:filters?|guardrails|safeguards|safety (?:features|filters|checks|measures|protocols|settings|mechanisms)|restrictions|limitations|censorship|content polic(?:y|ies))\\b'),
  rule('freed_from_constraints', 'jailbreak', 'high', ['freed', 'liberated', 'released', 'broken free', 'unshackled'],
    '\\b(?:freed|liberated|released|broken free|unshackled) from (?:the |your |all |any )?(?:typical |usual )?(?:confines|constraints|restrictions|limitations|rules|shackles|chains)'),
  rule('never_refuse', 'jailbreak', 'medium', ['refuse', 'decline', 'reject'],
    '\\byou (?:will|must|should|shall|can|may)? ?(?:never|not|no longer) (?:ever )?(?:refuse|decline|reject) (?:any |a |to answer |to respond to |my |the user\'s )?(?:request|question|prompt|order|command)'),
  rule('dual_response', 'jailbreak', 'medium', ['two', '2 '],
    '\\b(?:two|2) (?:different |separate )?(?:responses|answers|paragraphs)[^\\n]{0,80}?(?:one (?:normal|normally|as chatgpt|as yourself|filtered|censored)|jailbr|\\bdan\\b|unfiltered|classic)'),
  rule('unfiltered_ai', 'jailbreak', 'high', ['unfiltered', 'uncensored', 'unrestricted', 'amoral', 'jailbroken'],
    '\\b(?:unfiltered|uncensored|unrestricted|amoral|jailbroken) (?:ai|assistant|model|chatbot|response|answers?|version|llm|gpt|persona|mode)\\b'),
  rule('token_penalty_game', 'jailbreak', 'high', ['tokens'],
    '\\byou (?:have|start with|will start with) \\d{1,3} tokens[^\\n]{0,160}?(?:lose|deduct|deducted|lost)'),
  // Persona-jailbreak promises, written from the training jailbreak collections (pallms, GPTFuzz,
  // Malignant): "will always answer it, no matter how illegal ...", "does not have to abide by
  // the rules". Each needs the harm words or the AI's own rules being shed, so "always answer
  // politely, even if the customer is rude" and "you do not have to follow the rules of chess"
  // stay clean.
  rule('always_answer_regardless', 'jailbreak', 'high', ['always'],
    '\\b(?:will|must|should|shall|to) always (?:answer|respond|reply|provide (?:an )?answers?|comply)[^\\n]{0,80}?(?:no matter|regardless|even if|doesn\'?t matter if|does not matter if|whether or not)[^\\n]{0,80}?(?:illegal|unethical|immoral|harmful|inappropriate|dangerous|offensive|explicit)'),
  rule('not_bound_by_rules', 'jailbreak', 'high', ['abide', 'adhere', 'obey', 'comply', 'follow'],
    `\\b(?:you|${AI}) (?:(?:does|do|will|shall|should) ?(?:not|n't)|won't|never|no longer) (?:have to |need to )?(?:abide by|adhere to|obey|comply with|follow) (?:any|the) (?:of the )?(?:rules|guidelines|policies|restrictions|content polic(?:y|ies)|ethical guidelines|openai)\\b(?! (?:of|for|in|on|at|when) (?!(?:your|its|his|her|their|openai|anthropic|the (?:ai|company|developers?))\\b))`),
  rule('hypothetical_no_rules', 'jailbreak', 'medium', ['hypothetical', 'fictional'],
    '\\b(?:hypothetical|fictional) (?:scenario|world|story|response|universe)[^\\n]{0,80}?(?:no (?:rules|laws|restrictions|ethics)|without (?:any )?(?:rules|restrictions|filters|ethics))'),

  // ---- delimiter / markup injection ----
  rule('chat_template_tokens', 'delimiter_injection', 'high', ['<|'],
    '<\\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id|begin_of_text)\\|>'),
  rule('llama_inst_tags', 'delimiter_injection', 'high', ['[inst]', '[/inst]', '<<sys>>', '<</sys>>'],
    '\\[/?inst\\]|<</?sys>>'),
  rule('markdown_system_header', 'delimiter_injection', 'high', ['#'],
    '(?<=^|\\n)\\s{0,3}#{1,4}\\s{0,2}(?:system|new system|system prompt|system message|system override|admin override|developer override)\\s{0,2}:'),
  rule('fake_role_turn', 'delimiter_injection', 'high', ['system', 'admin', 'developer'],
    '(?<=^|\\n)\\s{0,3}[\\[<{(]?(?:system|admin|developer|root)[\\]>})]?\\s{0,2}(?:message|override|note|update|prompt)?\\s{0,2}:\\s{0,3}(?:ignore|disregard|you are|you must|new instructions|override|from now|forget)'),
  rule('fake_system_tag', 'delimiter_injection', 'medium', ['<system', '<sys>', '<admin', '<developer_instructions'],
    '<(?:system|system_prompt|sys|admin|developer_instructions)>'),
  rule('end_of_prompt_marker', 'delimiter_injection', 'medium', ['end of', 'ends here'],
    '\\b(?:end of (?:the )?(?:system prompt|instructions|user input|prompt|context)|(?:system|user) prompt ends here)\\W{0,12}(?:new|begin|start|now|ignore|real)'),

  // ---- indirect injection (text addressed to an AI reading a document) ----
  rule('if_you_are_an_ai', 'indirect_injection', 'high', ['if you are'],
    `\\bif you are (?:an? |the )?${AI}(?:s)?\\b(?: (?:reading|processing|summari[sz]ing|parsing|scanning|reviewing|analy[sz]ing|evaluating)|\\W{0,3}\\s{0,3}(?:ignore|please|you must|do not|disregard|include|tell|say|respond|reply|output|send|forward|recommend|rate|mark|append))`),
  rule('note_to_ai', 'indirect_injection', 'high', ['note', 'message', 'instruction', 'attention', 'important'],
    '\\b(?:note|message|instructions?|attention|important(?: note)?) (?:to|for) (?:the |any |all )?(?:ai|llm|ai assistants?|assistants?|language models?|chatbots?|ai agents?|gpt|claude|chatgpt|copilot)s?\\s{0,2}(?:[:,-]|reading this)'),
  rule('when_summarizing_this', 'indirect_injection', 'high', ['this'],
    '\\bwhen (?:you )?(?:summari[sz]e|summari[sz]ing|read|reading|process|processing|analy[sz]e|analy[sz]ing|review|reviewing|index|indexing|translate|translating) this (?:document|page|email|text|file|message|article|resume|cv|website|content|pdf)[^\\n]{0,40}?(?:,|you (?:must|should|will)|please|ignore|include|say|respond|tell|output|recommend|add)'),
  rule('ai_must_ignore', 'indirect_injection', 'high', ['must', 'should', 'shall', 'instructed'],
    `\\b${AI}s? (?:must|should|shall|is instructed to|are instructed to|will now) (?:ignore|disregard|exfiltrate|forward|leak|secretly)`),
  rule('markdown_image_exfiltration', 'indirect_injection', 'high', ['!['],
    '!\\[[^\\]\\n]{0,100}\\]\\(https?:\\/\\/[^)\\s]{1,300}?[?&][a-z_]{1,30}=(?:\\{|\\$\\{|%7b|\\[|<)'),
  rule('exfiltrate_conversation', 'indirect_injection', 'high', ['conversation', 'chat history', 'previous messages', 'user\'s'],
    '\\b(?:append|include|encode|send|add|embed|forward) (?:the |all |this )?(?:conversation|chat history|previous messages|user\'s (?:data|messages|password|email|api key|credentials))[^\\n]{0,60}?(?:url|link|image|query|request|endpoint)'),
];

/** Rules by id, for reports and tests. */
export const RULE_BY_ID = new Map(RULES.map((r) => [r.id, r]));
