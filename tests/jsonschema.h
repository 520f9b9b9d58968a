#pragma once

// Test support: a JSON Schema (draft 2020-12) validator for the subset the CLI's output schemas
// (resources/schema/) use: type (one name or an array of names; "integer" is a number with
// no fraction), properties, required, additionalProperties (true, false or a schema), items,
// prefixItems, enum, const, minimum, maximum, minItems, maxItems, minLength, minProperties, $ref,
// anyOf, oneOf. A $ref is "#/$defs/NAME" in the same document, or another schema given to the
// constructor, by its $id relative to this one's ("other.schema.json" or
// "other.schema.json#/$defs/NAME"), whose own "#/$defs" refs then resolve in it. Annotations
// ($schema, $id, title, description, $defs) are read past. Any other keyword is an error of the
// schema: a schema cannot rely on a rule this validator would not check.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

#include <cmath>

namespace paraplan::test {

class JsonSchemaValidator
{
public:
    /// `others`: the schemas a $ref of `root` may name, each by its "$id".
    explicit JsonSchemaValidator(QJsonObject root, const QList<QJsonObject>& others = {})
        : m_root(std::move(root))
    {
        for (const QJsonObject& other : others)
            m_documents.insert(other.value("$id").toString(), other);
    }

    /// Problems of `instance` against the root schema, each "PATH: what"; empty when valid.
    QStringList validate(const QJsonValue& instance) const
    {
        QStringList problems;
        check(m_root, instance, "$", &problems, 0, m_root);
        return problems;
    }

    /// Keywords in the schema (at any depth) that this validator does not implement.
    QStringList unsupportedKeywords() const
    {
        QStringList found;
        scan(m_root, "#", &found);
        return found;
    }

private:
    static const QSet<QString>& annotations()
    {
        static const QSet<QString> names{"$schema", "$id", "title", "description", "$defs"};
        return names;
    }
    static const QSet<QString>& assertions()
    {
        static const QSet<QString> names{
            "type",      "properties",    "required", "additionalProperties",
            "items",     "prefixItems",   "enum",     "const",
            "minimum",   "maximum",       "minItems", "maxItems",
            "minLength", "minProperties", "$ref",     "anyOf",
            "oneOf"};
        return names;
    }

    static void scan(const QJsonObject& schema, const QString& where, QStringList* found)
    {
        for (auto it = schema.begin(); it != schema.end(); ++it) {
            const QString key = it.key();
            if (!annotations().contains(key) && !assertions().contains(key))
                found->append(where + "/" + key);
            if (key == "properties" || key == "$defs") {
                const QJsonObject map = it.value().toObject();
                for (auto p = map.begin(); p != map.end(); ++p)
                    scan(p.value().toObject(), where + "/" + key + "/" + p.key(), found);
            } else if (key == "items" || (key == "additionalProperties" && it->isObject())) {
                scan(it.value().toObject(), where + "/" + key, found);
            } else if (key == "prefixItems" || key == "anyOf" || key == "oneOf") {
                const QJsonArray list = it.value().toArray();
                for (int i = 0; i < list.size(); ++i)
                    scan(list[i].toObject(), where + "/" + key + "/" + QString::number(i), found);
            }
        }
    }

    static bool isType(const QJsonValue& value, const QString& type)
    {
        if (type == "object")
            return value.isObject();
        if (type == "array")
            return value.isArray();
        if (type == "string")
            return value.isString();
        if (type == "boolean")
            return value.isBool();
        if (type == "null")
            return value.isNull();
        if (type == "number")
            return value.isDouble();
        if (type == "integer")
            return value.isDouble() && std::isfinite(value.toDouble()) &&
                   value.toDouble() == std::floor(value.toDouble());
        return false;
    }

    // The schema `ref` names, seen from `document`; *target becomes the document it lies in.
    QJsonObject resolve(const QString& ref, const QJsonObject& document, QJsonObject* target,
                        const QString& path, QStringList* problems) const
    {
        const int hash = ref.indexOf('#');
        const QString uri = hash < 0 ? ref : ref.left(hash);
        const QString fragment = hash < 0 ? QString() : ref.mid(hash + 1);
        *target = document;
        if (!uri.isEmpty()) {
            const QString id = document.value("$id").toString();
            const QString full = uri.contains(':') ? uri : id.left(id.lastIndexOf('/') + 1) + uri;
            if (!m_documents.contains(full)) {
                problems->append(path + ": unresolvable $ref '" + ref + "'");
                return {};
            }
            *target = m_documents.value(full);
            if (fragment.isEmpty())
                return *target;
        }
        const QString prefix = "/$defs/";
        const QString name = fragment.mid(prefix.size());
        if (!fragment.startsWith(prefix) || !target->value("$defs").toObject().contains(name)) {
            problems->append(path + ": unresolvable $ref '" + ref + "'");
            return {};
        }
        return target->value("$defs").toObject().value(name).toObject();
    }

    void check(const QJsonObject& schema, const QJsonValue& value, const QString& path,
               QStringList* problems, int depth, const QJsonObject& document) const
    {
        if (depth > 64) {
            problems->append(path + ": schema nesting deeper than 64 ($ref loop?)");
            return;
        }
        if (schema.contains("$ref")) {
            QJsonObject target;
            const QJsonObject resolved =
                resolve(schema.value("$ref").toString(), document, &target, path, problems);
            check(resolved, value, path, problems, depth + 1, target);
        }
        if (schema.contains("type")) {
            const QJsonValue type = schema.value("type");
            QStringList types;
            if (type.isArray()) {
                for (const QJsonValue& t : type.toArray())
                    types.append(t.toString());
            } else {
                types.append(type.toString());
            }
            bool any = false;
            for (const QString& t : types)
                any = any || isType(value, t);
            if (!any) {
                problems->append(path + ": expected " + types.join(" or ") + ", got " +
                                 describe(value));
                return;
            }
        }
        if (schema.contains("const") && schema.value("const") != value)
            problems->append(path + ": expected the constant " + describe(schema.value("const")) +
                             ", got " + describe(value));
        if (schema.contains("enum") && !schema.value("enum").toArray().contains(value))
            problems->append(path + ": " + describe(value) + " is not one of " +
                             compact(schema.value("enum")));
        if (value.isDouble()) {
            if (schema.contains("minimum") && value.toDouble() < schema.value("minimum").toDouble())
                problems->append(path + ": " + describe(value) + " is below the minimum " +
                                 describe(schema.value("minimum")));
            if (schema.contains("maximum") && value.toDouble() > schema.value("maximum").toDouble())
                problems->append(path + ": " + describe(value) + " is above the maximum " +
                                 describe(schema.value("maximum")));
        }
        if (value.isObject())
            checkObject(schema, value.toObject(), path, problems, depth, document);
        if (value.isArray())
            checkArray(schema, value.toArray(), path, problems, depth, document);
        if (value.isString() && schema.contains("minLength") &&
            value.toString().size() < schema.value("minLength").toInt())
            problems->append(path + ": a string shorter than minLength " +
                             QString::number(schema.value("minLength").toInt()));
        checkCombinations(schema, value, path, problems, depth, document);
    }

    void checkObject(const QJsonObject& schema, const QJsonObject& object, const QString& path,
                     QStringList* problems, int depth, const QJsonObject& document) const
    {
        if (schema.contains("minProperties") &&
            object.size() < schema.value("minProperties").toInt())
            problems->append(path + ": " + QString::number(object.size()) +
                             " properties, fewer than minProperties " +
                             QString::number(schema.value("minProperties").toInt()));
        for (const QJsonValue& name : schema.value("required").toArray()) {
            if (!object.contains(name.toString()))
                problems->append(path + ": required property '" + name.toString() + "' missing");
        }
        const QJsonObject properties = schema.value("properties").toObject();
        const QJsonValue additional = schema.value("additionalProperties");
        for (auto it = object.begin(); it != object.end(); ++it) {
            const QString at = path + "." + it.key();
            if (properties.contains(it.key()))
                check(properties.value(it.key()).toObject(), it.value(), at, problems, depth + 1,
                      document);
            else if (additional.isBool() && !additional.toBool())
                problems->append(at + ": property not in the schema");
            else if (additional.isObject())
                check(additional.toObject(), it.value(), at, problems, depth + 1, document);
        }
    }

    void checkArray(const QJsonObject& schema, const QJsonArray& array, const QString& path,
                    QStringList* problems, int depth, const QJsonObject& document) const
    {
        if (schema.contains("maxItems") && array.size() > schema.value("maxItems").toInt())
            problems->append(path + ": " + QString::number(array.size()) +
                             " items, more than maxItems " +
                             QString::number(schema.value("maxItems").toInt()));
        if (schema.contains("minItems") && array.size() < schema.value("minItems").toInt())
            problems->append(path + ": " + QString::number(array.size()) +
                             " items, fewer than minItems " +
                             QString::number(schema.value("minItems").toInt()));
        const QJsonArray prefix = schema.value("prefixItems").toArray();
        for (int i = 0; i < array.size(); ++i) {
            const QString at = path + "[" + QString::number(i) + "]";
            if (i < prefix.size())
                check(prefix[i].toObject(), array[i], at, problems, depth + 1, document);
            else if (schema.contains("items"))
                check(schema.value("items").toObject(), array[i], at, problems, depth + 1,
                      document);
        }
    }

    void checkCombinations(const QJsonObject& schema, const QJsonValue& value, const QString& path,
                           QStringList* problems, int depth, const QJsonObject& document) const
    {
        for (const char* keyword : {"anyOf", "oneOf"}) {
            if (!schema.contains(keyword))
                continue;
            int matches = 0;
            for (const QJsonValue& branch : schema.value(keyword).toArray()) {
                QStringList branchProblems;
                check(branch.toObject(), value, path, &branchProblems, depth + 1, document);
                matches += branchProblems.isEmpty() ? 1 : 0;
            }
            const bool one = QString(keyword) == "oneOf";
            if (matches == 0 || (one && matches > 1))
                problems->append(path + ": " + QString::number(matches) + " branches of " +
                                 keyword + " match" + (one ? " (exactly one must)" : ""));
        }
    }

    static QString compact(const QJsonValue& value)
    {
        if (value.isArray())
            return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
        return describe(value);
    }

    static QString describe(const QJsonValue& value)
    {
        switch (value.type()) {
        case QJsonValue::Null:
            return "null";
        case QJsonValue::Bool:
            return value.toBool() ? "true" : "false";
        case QJsonValue::Double:
            return QString::number(value.toDouble(), 'g', 12);
        case QJsonValue::String:
            return "\"" + value.toString() + "\"";
        case QJsonValue::Array:
            return "an array";
        case QJsonValue::Object:
            return "an object";
        default:
            return "nothing";
        }
    }

    QJsonObject m_root;
    QMap<QString, QJsonObject> m_documents;
};

} // namespace paraplan::test
