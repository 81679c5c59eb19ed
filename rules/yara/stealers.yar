// Credential stealers: several browser/wallet credential stores referenced together.
rule Stealer_Browser_Credentials
{
    meta:
        name = "Credential stealer"
        description = "References several browser credential stores and crypto wallets together, as infostealers do"
        severity = "high"
        category = "credential_access"
        confidence = "0.75"
    strings:
        $c1 = "\\Google\\Chrome\\User Data" nocase ascii wide
        $c2 = "\\Microsoft\\Edge\\User Data" nocase ascii wide
        $c3 = "\\BraveSoftware\\Brave-Browser" nocase ascii wide
        $c4 = "\\Mozilla\\Firefox\\Profiles" nocase ascii wide
        $f1 = "Login Data" ascii wide
        $f2 = "logins.json" ascii wide
        $f3 = "key4.db" ascii wide
        $f4 = "encrypted_key" ascii wide
        $w1 = "wallet.dat" nocase ascii wide
        $w2 = "\\Exodus\\exodus.wallet" nocase ascii wide
        $w3 = "\\Electrum\\wallets" nocase ascii wide
        $w4 = "\\Telegram Desktop\\tdata" nocase ascii wide
        $api = "CryptUnprotectData" ascii wide
    condition:
        filesize < 30MB and 2 of ($c*) and 2 of ($f*) and (any of ($w*) or $api)
}
