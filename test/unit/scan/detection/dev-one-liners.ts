/**
 * Everyday developer and operations one-liners (builds, packages, containers, version control,
 * certificates, packet captures, firewalls and protection switched on, services, deployment),
 * written for this project as a probe in round fourteen (not copied from any source, not trained
 * on; three lines that turned out to be admin-shapes training lines already were dropped, and a
 * unit test keeps the two lists apart). None is an attack.
 */
export const DEV_ONE_LINERS: ReadonlyArray<readonly [name: string, command: string]> = [
  ['build.bat', 'msbuild Contoso.sln /t:Clean;Build /p:Configuration=Debug /v:minimal'],
  ['build.ps1', 'dotnet build .\\Contoso.sln -c Release --no-restore'],
  ['test.ps1', 'dotnet test .\\tests\\Contoso.Tests.csproj --logger trx --results-directory .\\TestResults'],
  ['pack.ps1', 'dotnet publish src/Api/Api.csproj -c Release -r win-x64 --self-contained -o out'],
  ['restore.bat', 'nuget restore Contoso.sln -PackagesDirectory packages'],
  ['build.bat', 'devenv Contoso.sln /Build "Release|x64"'],
  ['build.sh', 'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j8'],
  ['build.sh', './configure --prefix=/usr/local && make -j$(nproc) && sudo make install'],
  ['build.sh', 'mvn -B clean verify -DskipTests=false'],
  ['build.sh', './gradlew assembleRelease --stacktrace'],
  ['ci.sh', 'npm ci && npm run build && npm test -- --coverage'],
  ['ci.sh', 'pip install -r requirements.txt && pytest -q tests/'],
  ['ci.sh', 'cargo build --release && cargo test --all'],
  ['ci.sh', 'go build -o bin/server ./cmd/server && go test ./...'],
  ['docker.sh', 'docker build -t registry.example.com/app:1.4.2 . && docker push registry.example.com/app:1.4.2'],
  ['docker.sh', 'docker run --rm -it -v $(pwd):/work -w /work node:20 npm test'],
  ['k8s.sh', 'kubectl rollout restart deployment/api -n prod && kubectl rollout status deployment/api -n prod'],
  ['k8s.sh', 'kubectl logs -f deploy/worker -n staging --since=10m'],
  ['git.sh', 'git fetch --all --prune && git rebase origin/main'],
  ['git.sh', 'git clone --depth 1 https://github.com/example/project.git && cd project && make'],
  ['cert.sh', 'openssl x509 -in server.crt -noout -text | grep -A2 Validity'],
  ['cert.sh', 'openssl s_client -connect api.example.com:443 -servername api.example.com </dev/null | openssl x509 -noout -dates'],
  ['cert.ps1', 'New-SelfSignedCertificate -DnsName dev.contoso.local -CertStoreLocation Cert:\\LocalMachine\\My'],
  ['cap.sh', 'sudo tcpdump -nn -i any host 10.0.3.14 and port 5432'],
  ['cap.sh', 'tshark -i eth0 -f \'port 53\' -c 100'],
  ['fw.sh', 'sudo ufw allow 22/tcp && sudo ufw enable'],
  ['av.ps1', 'Set-MpPreference -DisableRealtimeMonitoring $false'],
  ['sel.sh', 'sudo setenforce 1 && getenforce'],
  ['svc.sh', 'sudo systemctl enable --now nginx && sudo systemctl status nginx'],
  ['svc.sh', 'sudo journalctl -u sshd --since today | grep Failed'],
  ['ssh.sh', 'ssh -i ~/.ssh/deploy_key deploy@web01.example.com \'sudo systemctl reload nginx\''],
  ['ssh.sh', 'scp -r ./dist deploy@web01.example.com:/var/www/app/'],
  ['ssh.sh', 'ssh-keygen -t ed25519 -C \'ci@example.com\' -f ~/.ssh/ci_ed25519 -N \'\''],
  ['rsync.sh', 'rsync -avz --delete ./public/ deploy@web01:/srv/www/'],
  ['db.sh', 'pg_dump -Fc -h db01 -U app appdb > /backup/appdb-$(date +%F).dump'],
  ['db.sh', 'mysqldump --single-transaction -u backup -p appdb | gzip > /backup/appdb.sql.gz'],
  ['curl.sh', 'curl -fsS -X POST -H \'Content-Type: application/json\' -d @payload.json https://api.example.com/v1/jobs'],
  ['curl.sh', 'curl -sSL -o /tmp/go.tar.gz https://go.dev/dl/go1.22.3.linux-amd64.tar.gz && sudo tar -C /usr/local -xzf /tmp/go.tar.gz'],
  ['dl.ps1', 'Invoke-WebRequest -Uri https://aka.ms/vs/17/release/vs_buildtools.exe -OutFile $env:TEMP\\vs_buildtools.exe'],
  ['dl.ps1', 'Start-Process -FilePath "$env:TEMP\\vs_buildtools.exe" -ArgumentList \'--quiet --wait --norestart\' -Wait'],
  ['winget.ps1', 'winget install --id Git.Git -e --source winget --silent'],
  ['choco.ps1', 'choco install -y nodejs-lts python3 7zip'],
  ['proc.ps1', 'Get-Process -Name chrome | Stop-Process -Force'],
  ['proc.sh', 'pkill -f \'node server.js\' && nohup node server.js > server.log 2>&1 &'],
  ['perm.sh', 'sudo chown -R www-data:www-data /var/www/app && sudo chmod -R 750 /var/www/app'],
  ['cron.sh', '(crontab -l 2>/dev/null; echo \'0 3 * * * /usr/local/bin/backup.sh\') | crontab -'],
  ['task.bat', 'schtasks /create /tn "Nightly Backup" /tr "C:\\Scripts\\backup.cmd" /sc daily /st 02:00 /ru SYSTEM'],
  ['reg.bat', 'reg add HKLM\\SOFTWARE\\Contoso\\Agent /v LogLevel /t REG_SZ /d Debug /f'],
  ['user.ps1', 'New-LocalUser -Name svc_backup -Description \'Backup service account\' -NoPassword'],
  ['env.ps1', '[Environment]::SetEnvironmentVariable(\'JAVA_HOME\', \'C:\\Program Files\\Java\\jdk-21\', \'Machine\')'],
  ['hash.ps1', 'Get-FileHash .\\setup.exe -Algorithm SHA256'],
  ['py.sh', 'python3 -m venv .venv && . .venv/bin/activate && pip install -e .'],
  ['py.sh', 'python3 -m http.server 8000 --bind 127.0.0.1'],
  ['fw.bat', 'netsh advfirewall set allprofiles state on'],
  ['fw.ps1', 'Set-NetFirewallProfile -Profile Domain,Public,Private -Enabled True'],
  ['build.bat', 'msbuild.exe build.proj /t:Rebuild'],
  ['build.ps1', '& msbuild.exe .\\src\\App.csproj /t:Build /p:Platform=x64'],
];

/**
 * Suspicious with the shipped model, by the model alone (none Malicious): false positives the
 * probe found and this round did not fix (docs/detection.md, fourteenth round: benign training
 * lines for these families fixed them but made the independent benign sets worse, so they were
 * not shipped). Four more it found were fixed by the one-liner gate and are in the list above, so
 * for them this check is tuned: a firewall switched on with `netsh` and with
 * `Set-NetFirewallProfile` (protection switched on), and MSBuild building through a standard target
 * (twice). Kept here so the list stays the probe written.
 */
export const DEV_ONE_LINERS_STILL_FLAGGED: ReadonlyArray<readonly [name: string, command: string]> = [
  ['cap.sh', 'sudo tcpdump -i eth0 -w /tmp/capture.pcap port 443'],
  ['cert.sh', 'openssl req -x509 -newkey rsa:4096 -nodes -keyout key.pem -out cert.pem -days 365 -subj \'/CN=localhost\''],
];
