// Each test gives its own http.Client its scope's proxy and the CA bundle,
// so t.Parallel() tests run side by side, each in its scope; no preload
// and no environment is needed but MOCKLIB_URL.
package users

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

type scope struct {
	ID       int               `json:"id"`
	ProxyURL string            `json:"proxy_url"`
	AdminURL string            `json:"admin_url"`
	Env      map[string]string `json:"env"`
}

// inScope opens a scope for t (verified and ended when t ends) and returns
// it with a client whose requests go through it.
func inScope(t *testing.T) (scope, *http.Client) {
	t.Helper()
	server := os.Getenv("MOCKLIB_URL")
	response, err := http.Post(server+"/__mocklib/scopes", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var s scope
	if err := json.NewDecoder(response.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		verified, err := http.Get(s.AdminURL + "/verify")
		if err != nil {
			t.Fatal(err)
		}
		report, _ := io.ReadAll(verified.Body)
		end, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/__mocklib/scopes/%d", server, s.ID), nil)
		http.DefaultClient.Do(end)
		if verified.StatusCode != 200 {
			t.Error(string(report))
		}
	})
	proxy, _ := url.Parse(s.ProxyURL)
	bundle, _ := os.ReadFile(s.Env["SSL_CERT_FILE"]) // the system's roots and mocklib's CA
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	return s, &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxy),
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
}

func mock(t *testing.T, s scope, yaml string) {
	added, err := http.Post(s.AdminURL+"/handlers", "application/yaml", strings.NewReader(yaml))
	if err != nil || added.StatusCode != 201 {
		t.Fatalf("mock: %v %v", err, added)
	}
}

func getJSON(t *testing.T, client *http.Client, url string, into any) {
	response, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if err := json.NewDecoder(response.Body).Decode(into); err != nil {
		t.Fatal(err)
	}
}

func TestReadsAUser(t *testing.T) {
	t.Parallel()
	_, client := inScope(t)
	var user struct{ Name string }
	getJSON(t, client, "https://api.example.com/users/7", &user)
	if user.Name != "Kate" {
		t.Fatalf("name %q", user.Name)
	}
}

func TestParallelTestsSeeOnlyTheirOwnMocks(t *testing.T) {
	for owner := 0; owner < 40; owner++ {
		owner := owner
		t.Run(fmt.Sprint(owner), func(t *testing.T) {
			t.Parallel()
			s, client := inScope(t)
			mock(t, s, fmt.Sprintf("- path: https://api.example.com/orders/:id\n  json: { owner: %d }\n  times: 25\n", owner))
			for order := 0; order < 25; order++ {
				var answer struct{ Owner int }
				getJSON(t, client, fmt.Sprintf("https://api.example.com/orders/%d", order), &answer)
				if answer.Owner != owner {
					t.Fatalf("order %d answered for %d", order, answer.Owner)
				}
			}
		})
	}
}
