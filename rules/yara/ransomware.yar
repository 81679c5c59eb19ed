// Ransom notes and ransomware behaviour strings.
rule Ransomware_Note
{
    meta:
        name = "Ransomware note"
        description = "Text of a ransom note: files encrypted, payment demanded, decryption offered"
        severity = "high"
        category = "ransomware"
        confidence = "0.8"
    strings:
        $enc1 = "files have been encrypted" nocase ascii wide
        $enc2 = "files are encrypted" nocase ascii wide
        $enc3 = "have been locked" nocase ascii wide
        $pay1 = "bitcoin" nocase ascii wide
        $pay2 = "BTC" ascii wide
        $pay3 = "monero" nocase ascii wide
        $pay4 = "ransom" nocase ascii wide
        $dec1 = "decrypt" nocase ascii wide
        $dec2 = "decryption key" nocase ascii wide
        $tor = ".onion" nocase ascii wide
    condition:
        filesize < 5MB and any of ($enc*) and any of ($pay*) and any of ($dec*) and ($tor or #pay1 + #pay2 + #pay3 + #pay4 >= 2)
}

rule Ransomware_Shadow_Copy_Deletion
{
    meta:
        name = "Shadow copy deletion"
        description = "Deletes Volume Shadow Copies or disables recovery, as ransomware does before encrypting"
        severity = "high"
        category = "ransomware"
        confidence = "0.85"
    strings:
        $v1 = /vssadmin(\.exe)?\s+delete\s+shadows/ nocase ascii wide
        $v2 = /wmic(\.exe)?\s+shadowcopy\s+delete/ nocase ascii wide
        $v3 = /bcdedit(\.exe)?\s+\/set\s+\{default\}\s+recoveryenabled\s+no/ nocase ascii wide
        $v4 = /wbadmin(\.exe)?\s+delete\s+catalog/ nocase ascii wide
    condition:
        any of them
}
